//! One process per spool directory: an exclusive `flock` on `<dir>/.lock`, held by the writer
//! thread for as long as it appends. A second process (an overlapping deploy) waits for the
//! first to let go, then recovers what it left; it never cuts or seals a live writer's segment.
//! The kernel releases the lock when the holder exits, however it exits.

use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

pub struct DirLock {
    _file: File,
}

impl DirLock {
    pub fn acquire(dir: &Path, wait: Duration) -> io::Result<DirLock> {
        let path = dir.join(".lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)?;
        let started = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(DirLock { _file: file }),
                Err(TryLockError::WouldBlock) => {}
                Err(TryLockError::Error(error)) => return Err(error),
            }
            if started.elapsed() >= wait {
                return Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    format!(
                        "the spool {} is in use by another process (still after {} s)",
                        dir.display(),
                        wait.as_secs()
                    ),
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
