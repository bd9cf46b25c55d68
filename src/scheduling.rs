//! How the service's threads ask Linux's scheduler for what they need: background work yields to
//! requests, and threads that are woken to answer requests run promptly.

use std::io;
use std::time::Duration;

/// Sets the calling thread's nice value (Linux schedules threads, and takes it per thread).
pub fn set_thread_nice(nice: i32) -> io::Result<()> {
    // SAFETY: gettid and setpriority only read their integer arguments.
    let result = unsafe {
        let thread = libc::gettid() as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, thread, nice)
    };
    if result == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `struct sched_attr` (linux/sched/types.h), the first version (48 bytes): libc has no binding.
#[repr(C)]
#[derive(Default)]
struct SchedAttr {
    size: u32,
    policy: u32,
    flags: u64,
    nice: i32,
    priority: u32,
    runtime: u64,
    deadline: u64,
    period: u64,
}

/// Asks for a short time slice for the calling thread (Linux 6.12 and later); its policy
/// (normal) and nice value stay as they are.
///
/// A thread that sleeps most of the time and is woken to do a few microseconds of work (the spool
/// writer, after each `fdatasync`) otherwise waits on a busy core until the running task's slice
/// or the next scheduler tick ends: up to 4 ms here, while every request of its commit group
/// waits with it. The scheduler lets a task with a shorter slice pre-empt on wake-up. It needs no
/// privilege, and the thread gets no more CPU than before, only sooner. The kernel keeps slices
/// between 0.1 and 100 ms; older kernels ignore the request, which the read-back tells.
pub fn request_short_slice(slice: Duration) -> io::Result<()> {
    let mut attr = current_attr()?;
    attr.size = std::mem::size_of::<SchedAttr>() as u32;
    attr.runtime = slice.as_nanos() as u64;
    // SAFETY: the kernel reads `size` bytes of a valid, initialised struct; 0 is this thread.
    let result = unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr as *const SchedAttr, 0) };
    if result != 0 {
        return Err(io::Error::last_os_error());
    }
    if current_attr()?.runtime == 0 {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this kernel keeps its own time slices (custom slices came with Linux 6.12)",
        ));
    }
    Ok(())
}

/// The calling thread's scheduling attributes.
fn current_attr() -> io::Result<SchedAttr> {
    let mut attr = SchedAttr::default();
    let size = std::mem::size_of::<SchedAttr>() as libc::c_uint;
    // SAFETY: the kernel writes at most `size` bytes into the struct; 0 is this thread.
    let result = unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            0,
            &mut attr as *mut SchedAttr,
            size,
            0,
        )
    };
    if result == 0 {
        Ok(attr)
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_attribute_struct_is_the_kernels_first_version() {
        assert_eq!(std::mem::size_of::<SchedAttr>(), 48);
    }

    /// On a kernel with custom slices (this machine's), the thread has the slice it asked for
    /// and is still a normal thread at its nice value; on an older one the request says it was
    /// not granted.
    #[test]
    fn a_short_slice_is_granted_and_read_back_or_refused() {
        std::thread::spawn(|| {
            set_thread_nice(3).unwrap();
            match request_short_slice(Duration::from_micros(100)) {
                Ok(()) => {
                    let attr = current_attr().unwrap();
                    assert_eq!(attr.runtime, 100_000);
                    assert_eq!(attr.policy, libc::SCHED_OTHER as u32);
                    assert_eq!(attr.nice, 3);
                }
                Err(e) => assert_eq!(e.kind(), io::ErrorKind::Unsupported, "{e}"),
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_thread_may_lower_its_own_priority() {
        std::thread::spawn(|| {
            set_thread_nice(10).unwrap();
            assert_eq!(current_attr().unwrap().nice, 10);
        })
        .join()
        .unwrap();
    }
}
