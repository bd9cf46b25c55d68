//! A TCP proxy in front of ClickHouse or Postgres that a test can switch between healthy,
//! refusing, stopped, and "lands but never answers" — real faults on real connections, without
//! stopping the servers other tests share.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use super::eventually;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Forward both ways.
    Up,
    /// Close every connection at once, open ones included: new ones are accepted and closed
    /// unserved (what a load balancer with no server behind it does).
    Down,
    /// As a stopped server: open connections are closed and nothing listens, so the kernel
    /// refuses new ones (clients such as sqlx's pool keep retrying a refusal until their
    /// timeout). Back `Up`, the proxy listens on the same port again.
    Stopped,
    /// Forward requests to ClickHouse but drop its answers and hang up: the work is done, the
    /// client never hears of it (what a timeout or a crash mid-insert looks like).
    SwallowResponses,
}

pub struct FaultProxy {
    pub url: String,
    address: SocketAddr,
    mode: Arc<watch::Sender<Mode>>,
    /// Connections closed unserved because the proxy was down: each one a client's attempt.
    refused: Arc<AtomicUsize>,
}

impl FaultProxy {
    /// A proxy to `target`: `http://ip:port` or `ip:port`.
    pub async fn start(target: &str) -> FaultProxy {
        let target: SocketAddr = target
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .parse()
            .expect("the target is ip:port");
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let url = format!("http://{address}");
        let (mode, _) = watch::channel(Mode::Up);
        let mode = Arc::new(mode);
        let modes = mode.clone();
        let refused = Arc::new(AtomicUsize::new(0));
        let refusals = refused.clone();
        tokio::spawn(async move {
            let mut listening = Some(listener);
            let mut changes = modes.subscribe();
            loop {
                let Some(listener) = listening.take() else {
                    // Stopped: nothing listens until the proxy is up again.
                    if changes.wait_for(|m| *m != Mode::Stopped).await.is_err() {
                        return;
                    }
                    listening = Some(listen_again(address).await);
                    continue;
                };
                tokio::select! {
                    accepted = listener.accept() => {
                        let Ok((client, _)) = accepted else { return };
                        let rx = modes.subscribe();
                        tokio::spawn(serve(client, target, rx, refusals.clone()));
                        listening = Some(listener);
                    }
                    stopped = changes.wait_for(|m| *m == Mode::Stopped) => {
                        if stopped.is_err() {
                            return;
                        }
                        // The listener is dropped: connections are refused from now on.
                    }
                }
            }
        });
        FaultProxy {
            url,
            address,
            mode,
            refused,
        }
    }

    /// `database_url` (a Postgres URL) with the proxy's address in place of the server's.
    pub fn postgres_url(&self, database_url: &str) -> String {
        let mut url = url::Url::parse(database_url).expect("a Postgres URL");
        url.set_host(Some(&self.address.ip().to_string())).unwrap();
        url.set_port(Some(self.address.port())).unwrap();
        url.to_string()
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
        let what = format!("{count} connections refused");
        eventually(&what, within, || async {
            let refused = self.refused();
            (refused >= count).then_some(()).ok_or(refused)
        })
        .await;
    }
}

/// Binds `address` again once the proxy is back up after being stopped (the port is the one
/// clients were given). Another socket may hold the port for a moment: retried briefly.
async fn listen_again(address: SocketAddr) -> TcpListener {
    let what = format!("listening on {address} again");
    eventually(&what, Duration::from_secs(10), || async {
        TcpListener::bind(address).await.map_err(|e| e.to_string())
    })
    .await
}

async fn serve(
    mut client: TcpStream,
    target: SocketAddr,
    mut mode: watch::Receiver<Mode>,
    refused: Arc<AtomicUsize>,
) {
    let current = *mode.borrow_and_update();
    if matches!(current, Mode::Down | Mode::Stopped) {
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
        let _ = watch_down
            .wait_for(|m| matches!(m, Mode::Down | Mode::Stopped))
            .await;
    };
    tokio::select! {
        _ = upstream => {}
        _ = downstream => {}
        () = going_down => {}
    }
}
