//! A TCP proxy in front of ClickHouse that a test can switch between healthy, refusing, and
//! "lands but never answers" — real faults on real connections, without stopping the server
//! other tests share.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Forward both ways.
    Up,
    /// Close every connection at once, open ones included.
    Down,
    /// Forward requests to ClickHouse but drop its answers and hang up: the work is done, the
    /// client never hears of it (what a timeout or a crash mid-insert looks like).
    SwallowResponses,
}

pub struct FaultProxy {
    pub url: String,
    mode: Arc<watch::Sender<Mode>>,
    /// Connections closed unserved because the proxy was down: each one a client's attempt.
    refused: Arc<AtomicUsize>,
}

impl FaultProxy {
    pub async fn start(target: &str) -> FaultProxy {
        let target: SocketAddr = target
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .parse()
            .expect("ClickHouse URL is http://ip:port");
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (mode, _) = watch::channel(Mode::Up);
        let mode = Arc::new(mode);
        let modes = mode.clone();
        let refused = Arc::new(AtomicUsize::new(0));
        let refusals = refused.clone();
        tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    return;
                };
                let rx = modes.subscribe();
                tokio::spawn(serve(client, target, rx, refusals.clone()));
            }
        });
        FaultProxy { url, mode, refused }
    }

    pub fn set(&self, mode: Mode) {
        self.mode.send_replace(mode);
    }

    /// How many connections the proxy has refused (closed at once, being down) so far.
    pub fn refused(&self) -> usize {
        self.refused.load(Ordering::SeqCst)
    }

    /// Waits until the proxy has refused `count` connections in all: clients tried that often.
    pub async fn wait_for_refusals(&self, count: usize, within: Duration) {
        let started = Instant::now();
        while self.refused() < count {
            assert!(
                started.elapsed() < within,
                "{} of {count} connections refused after {within:?}",
                self.refused()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

async fn serve(
    mut client: TcpStream,
    target: SocketAddr,
    mut mode: watch::Receiver<Mode>,
    refused: Arc<AtomicUsize>,
) {
    let current = *mode.borrow_and_update();
    if current == Mode::Down {
        refused.fetch_add(1, Ordering::SeqCst);
        return; // dropped: the client sees the connection closed
    }
    let Ok(mut server) = TcpStream::connect(target).await else {
        return;
    };
    let (mut client_read, mut client_write) = client.split();
    let (mut server_read, mut server_write) = server.split();
    let upstream = tokio::io::copy(&mut client_read, &mut server_write);
    let downstream = async {
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            let n = server_read.read(&mut buffer).await?;
            if n == 0 {
                return Ok::<_, std::io::Error>(());
            }
            if *mode.borrow() == Mode::SwallowResponses {
                // ClickHouse has answered, so the work is done: hang up without passing it on.
                return Ok(());
            }
            client_write.write_all(&buffer[..n]).await?;
        }
    };
    let mut watch_down = mode.clone();
    let going_down = async move {
        let _ = watch_down.wait_for(|m| *m == Mode::Down).await;
    };
    tokio::select! {
        _ = upstream => {}
        _ = downstream => {}
        () = going_down => {}
    }
}
