//! The binary itself: configuration errors at start, and graceful shutdown on SIGTERM.

use std::process::Command;
use std::time::Duration;

use crate::support::*;

fn videoapp() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_videoapp"));
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    command
}

fn complete_env(command: &mut Command) -> &mut Command {
    command
        .env("DATABASE_URL", "postgres://u:p@127.0.0.1:1/db")
        .env("CLICKHOUSE_URL", "http://127.0.0.1:1")
        .env("VIDEOAPP_PROXY_SECRET", "s")
        .env("VIDEOAPP_ADMIN_TOKEN", ADMIN_TOKEN)
}

#[test]
fn serve_without_a_required_setting_stops_with_one_line_naming_it() {
    for missing in [
        "DATABASE_URL",
        "CLICKHOUSE_URL",
        "VIDEOAPP_PROXY_SECRET",
        "VIDEOAPP_ADMIN_TOKEN",
    ] {
        let mut command = videoapp();
        complete_env(&mut command).env_remove(missing).arg("serve");
        let output = command.output().unwrap();
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(output.status.code(), Some(2), "{missing}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{missing}: {stderr}");
        assert!(
            stderr.contains(&format!("missing required setting {missing}")),
            "{stderr}"
        );
    }
}

#[test]
fn serve_with_a_malformed_setting_stops_with_one_line_naming_it() {
    let cases = [
        ("VIDEOAPP_LISTEN", "not-an-address"),
        ("CLICKHOUSE_URL", "localhost:8123"),
        ("VIDEOAPP_LOG_FORMAT", "xml"),
        ("VIDEOAPP_SIGNATURE_MAX_AGE_SECONDS", "-5"),
        ("VIDEOAPP_SPOOL_COMMIT_DELAY_MICROS", "soon"),
        ("VIDEOAPP_SPOOL_COMMIT_DELAY_MICROS", "5000000"),
    ];
    for (name, value) in cases {
        let mut command = videoapp();
        complete_env(&mut command).env(name, value).arg("serve");
        let output = command.output().unwrap();
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(output.status.code(), Some(2), "{name}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{name}: {stderr}");
        assert!(
            stderr.contains(&format!("invalid setting {name}")),
            "{stderr}"
        );
    }
}

#[test]
fn two_malformed_settings_in_the_environment_are_named_on_one_line() {
    let mut command = videoapp();
    complete_env(&mut command)
        .env("VIDEOAPP_LISTEN", "not-an-address")
        .env("VIDEOAPP_SPOOL_COMMIT_DELAY_MICROS", "5000000")
        .arg("serve");
    let output = command.output().unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    for name in ["VIDEOAPP_LISTEN", "VIDEOAPP_SPOOL_COMMIT_DELAY_MICROS"] {
        assert!(
            stderr.contains(&format!("invalid setting {name}")),
            "{stderr}"
        );
    }
}

#[test]
fn two_missing_settings_are_named_on_one_line() {
    let mut command = videoapp();
    complete_env(&mut command)
        .env_remove("DATABASE_URL")
        // Only whitespace counts as unset.
        .env("VIDEOAPP_ADMIN_TOKEN", "  ")
        .arg("serve");
    let output = command.output().unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(
            "missing required settings DATABASE_URL (or --database-url), \
             VIDEOAPP_ADMIN_TOKEN (or --admin-token)"
        ),
        "{stderr}"
    );
}

#[test]
fn missing_and_malformed_settings_are_named_on_one_line_without_a_secret() {
    let mut command = videoapp();
    complete_env(&mut command)
        .env_remove("CLICKHOUSE_URL")
        .env("DATABASE_URL", "mysql://u:db-password-3141@127.0.0.1/db")
        .env("VIDEOAPP_LOG_FORMAT", "xml")
        .arg("serve");
    let output = command.output().unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    for named in [
        "missing required setting CLICKHOUSE_URL",
        "invalid setting DATABASE_URL",
        "invalid setting VIDEOAPP_LOG_FORMAT",
    ] {
        assert!(stderr.contains(named), "{named}: {stderr}");
    }
    assert!(!stderr.contains("db-password-3141"), "{stderr}");
}

#[test]
fn the_platform_settings_on_without_a_token_key_stop_the_service_at_start() {
    let mut command = videoapp();
    complete_env(&mut command)
        .env("VIDEOAPP_CLIENT_ID", "client-1")
        .arg("serve");
    let output = command.output().unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("missing required setting VIDEOAPP_TOKEN_KEY"),
        "{stderr}"
    );
}

#[test]
fn a_token_key_that_is_not_32_bytes_is_refused_without_repeating_it() {
    for key in ["0123456789abcdef", "not base64 at all!", &"0f".repeat(31)] {
        let mut command = videoapp();
        complete_env(&mut command)
            .env("VIDEOAPP_CLIENT_ID", "client-1")
            .env("VIDEOAPP_TOKEN_KEY", key)
            .arg("serve");
        let output = command.output().unwrap();
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(output.status.code(), Some(2), "{key}: {stderr}");
        assert!(
            stderr.contains("invalid setting VIDEOAPP_TOKEN_KEY"),
            "{stderr}"
        );
        assert!(!stderr.contains(key), "{stderr}");
    }
}

#[test]
fn flags_work_like_the_environment() {
    let output = videoapp()
        .args([
            "serve",
            "--database-url",
            "postgres://u:p@127.0.0.1:1/db",
            "--clickhouse-url",
            "http://127.0.0.1:1",
        ])
        .args(["--proxy-secret", "s", "--listen", "nope"])
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    // Everything the flags gave was taken; the first thing still missing is named.
    assert!(
        stderr.contains("missing required setting VIDEOAPP_ADMIN_TOKEN"),
        "{stderr}"
    );
}

#[test]
fn sign_prints_a_url_the_service_would_accept() {
    let output = videoapp()
        .env("VIDEOAPP_PROXY_SECRET", PROXY_SECRET)
        .args([
            "sign",
            "--shop",
            "demo.myshopify.com",
            "/apps/videoapp_sub/contextual-widgets",
            "location=home",
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let url = url::Url::parse(String::from_utf8(output.stdout).unwrap().trim()).unwrap();
    assert_eq!(url.path(), "/apps/videoapp_sub/contextual-widgets");
    let secret = videoapp::storefront::signature::ProxySecret::new(PROXY_SECRET);
    videoapp::storefront::signature::verify(&secret, url.query().unwrap(), chrono::Utc::now(), 90)
        .expect("the printed URL verifies");
    let params: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    assert!(params.contains(&("shop".into(), "demo.myshopify.com".into())));
    assert!(params.contains(&("location".into(), "home".into())));

    let output = videoapp()
        .args(["sign", "--shop", "demo.myshopify.com", "/x"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("VIDEOAPP_PROXY_SECRET"));
}

#[tokio::test]
async fn sigterm_stops_the_service_gracefully() {
    let database_url = fresh_database().await;
    let mut service = spawn_binary(&[
        ("DATABASE_URL", database_url),
        ("CLICKHOUSE_URL", clickhouse_url()),
        ("CLICKHOUSE_DATABASE", fresh_clickhouse_database()),
        (
            "VIDEOAPP_SPOOL_DIR",
            fresh_spool_dir().display().to_string(),
        ),
    ]);
    let address = service.address.clone();
    let health = reqwest::get(format!("{address}/healthz")).await.unwrap();
    assert_eq!(health.status(), reqwest::StatusCode::OK);

    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(service.child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();

    let child = &std::sync::Mutex::new(&mut service.child);
    let status = eventually(
        "the service exited after SIGTERM",
        Duration::from_secs(15),
        move || async move {
            child
                .lock()
                .unwrap()
                .try_wait()
                .unwrap()
                .ok_or("still running")
        },
    )
    .await;
    assert!(status.success(), "exit status {status}");
    assert!(
        reqwest::get(format!("{address}/healthz")).await.is_err(),
        "still accepting"
    );
}
