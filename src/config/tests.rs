//! The settings as the commands see them: defaults, missing and malformed values, secrets.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::{CommandFactory, Parser};

use super::parse::{parse_from, without_env, without_option};
use super::values::boolean;
use super::*;

#[derive(Debug, Parser)]
struct Cli {
    #[command(flatten)]
    settings: Settings,
}

/// The settings and problems `args` give, with nothing from the environment.
fn parse_args(args: &[&str]) -> (Settings, ConfigErrors) {
    let argv = std::iter::once("videoapp").chain(args.iter().copied());
    let (cli, problems) = parse_from::<Cli>(without_env(Cli::command()), argv.map(Into::into));
    (cli.settings, problems)
}

/// A change to a complete configuration, and the setting the error must name.
type Case = (fn(&mut Settings), &'static str);

fn complete() -> Settings {
    Settings {
        database_url: Some("postgres://u:p@127.0.0.1:5432/db".into()),
        clickhouse_url: Some("http://127.0.0.1:8123".parse().unwrap()),
        proxy_secret: Some("secret".into()),
        admin_token: Some("0123456789abcdef".into()),
        ..Settings::default()
    }
}

#[test]
fn a_complete_configuration_takes_the_documented_defaults() {
    let config = complete().server_config().unwrap();
    assert_eq!(config.listen.to_string(), "127.0.0.1:8080");
    assert_eq!(config.metrics_listen.to_string(), "127.0.0.1:9464");
    assert_eq!(config.clickhouse.url, "http://127.0.0.1:8123");
    assert_eq!(config.clickhouse.database, "videoapp");
    assert_eq!(config.clickhouse.user, "default");
    assert_eq!(config.signature_max_age, Duration::from_secs(90));
    assert!(!config.insecure_skip_signature);
    assert_eq!(config.spool_dir, PathBuf::from("spool"));
    assert_eq!(config.catalog_cache_ttl, Duration::from_secs(300));
    assert_eq!(config.spool_max_bytes, DEFAULT_SPOOL_MAX_BYTES);
    assert_eq!(config.batch_max_rows as u64, DEFAULT_BATCH_MAX_ROWS);
    assert_eq!(
        config.batch_max_age,
        Duration::from_millis(DEFAULT_BATCH_MAX_AGE_MS)
    );
    assert_eq!(
        config.spool_commit_delay,
        Duration::from_micros(DEFAULT_SPOOL_COMMIT_DELAY_MICROS)
    );
    assert_eq!(config.clickhouse_insert_timeout, Duration::from_secs(30));
    assert_eq!(config.event_max_future, Duration::from_secs(86_400));
    assert_eq!(config.event_max_past, Duration::from_secs(604_800));
    assert_eq!(config.rate_limit_per_minute.get(), 60);
    assert_eq!(config.view_count_refresh, Duration::from_secs(60));
    assert_eq!(config.compaction_quiet, Duration::from_secs(3600));
    assert_eq!(config.shutdown_grace, Duration::from_secs(10));
    let connections = config.connections;
    assert_eq!(
        connections.header_read_timeout,
        Duration::from_secs(DEFAULT_HEADER_READ_TIMEOUT_SECONDS)
    );
    assert_eq!(
        connections.body_read_timeout,
        Duration::from_secs(DEFAULT_BODY_READ_TIMEOUT_SECONDS)
    );
    assert_eq!(
        connections.idle_timeout,
        Duration::from_secs(DEFAULT_IDLE_TIMEOUT_SECONDS)
    );
    assert_eq!(connections.max_connections, DEFAULT_MAX_CONNECTIONS);
    let webhooks = config.webhooks;
    assert_eq!(webhooks.replay_window, Duration::from_secs(6 * 3600));
    assert_eq!(webhooks.retention, Duration::from_secs(48 * 3600));
    assert_eq!(webhooks.body_budget_bytes, 64 * 1024 * 1024);
    assert_eq!(complete().log_format, LogFormat::Human);
    assert_eq!(complete().dev_store_listen().to_string(), "127.0.0.1:3000");
}

#[test]
fn each_missing_required_setting_is_named() {
    let cases: [Case; 4] = [
        (|s| s.database_url = None, "DATABASE_URL"),
        (|s| s.clickhouse_url = None, "CLICKHOUSE_URL"),
        (|s| s.proxy_secret = None, "VIDEOAPP_PROXY_SECRET"),
        (|s| s.admin_token = None, "VIDEOAPP_ADMIN_TOKEN"),
    ];
    for (unset, name) in cases {
        let mut settings = complete();
        unset(&mut settings);
        let err = settings.server_config().unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("missing required setting {name}")),
            "{err}"
        );
    }
}

#[test]
fn every_missing_required_setting_is_named_at_once() {
    let err = Settings::default().server_config().unwrap_err().to_string();
    assert_eq!(
        err,
        "missing required settings DATABASE_URL (or --database-url), \
         CLICKHOUSE_URL (or --clickhouse-url), VIDEOAPP_PROXY_SECRET (or --proxy-secret), \
         VIDEOAPP_ADMIN_TOKEN (or --admin-token)"
    );
}

#[test]
fn malformed_values_are_named() {
    let cases = [
        (["--listen", "localhost"], "VIDEOAPP_LISTEN"),
        (["--database-url", "mysql://x"], "DATABASE_URL"),
        (["--clickhouse-url", "127.0.0.1:8123"], "CLICKHOUSE_URL"),
        (["--clickhouse-database", "a-b"], "CLICKHOUSE_DATABASE"),
        (["--admin-token", "short"], "VIDEOAPP_ADMIN_TOKEN"),
        (
            ["--shutdown-grace-seconds", "ten"],
            "VIDEOAPP_SHUTDOWN_GRACE_SECONDS",
        ),
        (
            ["--header-read-timeout-seconds", "0"],
            "VIDEOAPP_HEADER_READ_TIMEOUT_SECONDS",
        ),
        (["--max-connections", "0"], "VIDEOAPP_MAX_CONNECTIONS"),
        (
            ["--compaction-quiet-seconds", "59"],
            "VIDEOAPP_COMPACTION_QUIET_SECONDS",
        ),
        (
            ["--compaction-quiet-seconds", "31622401"],
            "VIDEOAPP_COMPACTION_QUIET_SECONDS",
        ),
        (
            ["--webhook-replay-window-seconds", "59"],
            "VIDEOAPP_WEBHOOK_REPLAY_WINDOW_SECONDS",
        ),
        (
            ["--webhook-retention-seconds", "3599"],
            "VIDEOAPP_WEBHOOK_RETENTION_SECONDS",
        ),
        (
            ["--webhook-body-budget-bytes", "4194303"],
            "VIDEOAPP_WEBHOOK_BODY_BUDGET_BYTES",
        ),
    ];
    for (args, name) in cases {
        let (_, problems) = parse_args(&args);
        let err = problems.to_string();
        assert!(err.starts_with(&format!("invalid setting {name}")), "{err}");
        assert_eq!(problems.iter().count(), 1, "{err}");
    }
}

#[test]
fn every_malformed_value_is_named_at_once_and_left_out() {
    let (settings, problems) = parse_args(&[
        "--listen=nope",
        "--spool-commit-delay-micros",
        "5000000",
        "--log-format",
        "xml",
        "--rate-limit-per-minute",
        "0",
        "--shutdown-grace-seconds",
        "3",
    ]);
    assert_eq!(
        problems.to_string(),
        "invalid setting VIDEOAPP_LISTEN (--listen): 'nope' is not an address like \
         127.0.0.1:8080; invalid setting VIDEOAPP_LOG_FORMAT (--log-format): 'xml' is not \
         human or json; invalid setting VIDEOAPP_SPOOL_COMMIT_DELAY_MICROS \
         (--spool-commit-delay-micros): 5000000 is not in 0..=100000; invalid setting \
         VIDEOAPP_RATE_LIMIT_PER_MINUTE (--rate-limit-per-minute): 0 is not in 1..=4294967295"
    );
    // The malformed ones are parsed as if not given; the rest as given.
    assert_eq!(settings.listen, None);
    assert_eq!(settings.rate_limit_per_minute, 60);
    assert_eq!(settings.shutdown_grace, Duration::from_secs(3));
}

#[test]
fn a_retention_that_does_not_outlast_the_replay_window_is_refused() {
    let mut settings = complete();
    settings.webhook_replay_window_seconds = 4 * 3600;
    settings.webhook_retention_seconds = 4 * 3600 + 300;
    assert_eq!(
        settings.server_config().unwrap_err().to_string(),
        "invalid setting VIDEOAPP_WEBHOOK_RETENTION_SECONDS: 14700 seconds must be more than \
         the replay window (14400 seconds, VIDEOAPP_WEBHOOK_REPLAY_WINDOW_SECONDS) and 300 \
         seconds"
    );
    settings.webhook_retention_seconds += 1;
    let limits = settings.server_config().unwrap().webhooks;
    assert_eq!(limits.retention, Duration::from_secs(14_701));
}

#[test]
fn missing_and_malformed_settings_are_named_together() {
    let (settings, problems) = parse_args(&["--listen", "nope", "--proxy-secret", "s"]);
    let err = problems.and(settings.server_config()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "missing required settings DATABASE_URL (or --database-url), CLICKHOUSE_URL (or \
         --clickhouse-url), VIDEOAPP_ADMIN_TOKEN (or --admin-token); invalid setting \
         VIDEOAPP_LISTEN (--listen): 'nope' is not an address like 127.0.0.1:8080"
    );
    // A malformed required setting is named as malformed, not also as missing.
    let (settings, problems) = parse_args(&["--admin-token", "short"]);
    let err = problems.and(settings.admin_token()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid setting VIDEOAPP_ADMIN_TOKEN (--admin-token): must be at least 16 characters"
    );
}

#[test]
fn values_are_typed_and_trimmed() {
    let (settings, problems) = parse_args(&[
        "--listen",
        " 0.0.0.0:80 ",
        "--clickhouse-url",
        "http://ch:8123/",
        "--batch-max-age-ms",
        " 250",
        "--spool-commit-delay-micros",
        "0",
        "--log-format",
        "json ",
        "--insecure-skip-signature",
        "--proxy-secret",
        " hush\n",
    ]);
    assert!(problems.is_empty(), "{problems}");
    assert_eq!(settings.serve_listen().to_string(), "0.0.0.0:80");
    assert_eq!(settings.clickhouse().unwrap().url, "http://ch:8123");
    assert_eq!(settings.batch_max_age, Duration::from_millis(250));
    assert_eq!(settings.spool_commit_delay, Duration::ZERO);
    assert_eq!(settings.log_format, LogFormat::Json);
    assert!(settings.insecure_skip_signature);
    use secrecy::ExposeSecret;
    assert_eq!(settings.proxy_secret().unwrap().expose_secret(), "hush");
}

#[test]
fn the_skip_flag_takes_the_usual_words_for_true_and_false() {
    for word in ["1", "true", "YES", " on"] {
        assert_eq!(boolean(word), Ok(true), "{word}");
    }
    for word in ["0", "false", "No", "off "] {
        assert_eq!(boolean(word), Ok(false), "{word}");
    }
    assert!(boolean("maybe").is_err());
}

#[test]
fn only_the_malformed_option_is_dropped_from_the_command_line() {
    let argv = |words: &[&str]| words.iter().map(OsString::from).collect::<Vec<_>>();
    assert_eq!(
        without_option(
            argv(&[
                "videoapp",
                "--listen",
                "x",
                "serve",
                "--listen=y",
                "--metrics-listen",
                "z"
            ]),
            "listen"
        ),
        argv(&["videoapp", "serve", "--metrics-listen", "z"])
    );
    assert_eq!(
        without_option(argv(&["videoapp", "sign", "--", "--listen", "x"]), "listen"),
        argv(&["videoapp", "sign", "--", "--listen", "x"])
    );
}

#[test]
fn debug_output_shows_no_secret() {
    let secrets = [
        "db-password-3141",
        "clickhouse-password-2718",
        "proxy-secret-1618",
        "admin-token-0123456789",
    ];
    let settings = Settings {
        database_url: Some(format!("postgres://u:{}@127.0.0.1:5432/db", secrets[0]).into()),
        clickhouse_password: secrets[1].into(),
        proxy_secret: Some(secrets[2].into()),
        admin_token: Some(secrets[3].into()),
        ..complete()
    };
    let config = settings.server_config().unwrap();
    for shown in [format!("{settings:?}"), format!("{config:?}")] {
        assert!(shown.contains("127.0.0.1:9464"), "{shown}");
        for secret in secrets {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
    }
}

#[test]
fn help_shows_defaults_and_limits() {
    let help = Cli::command().render_help().to_string();
    for shown in [
        "[default: 90]",
        "[default: 1073741824]",
        "at most 100000",
        "[possible values: human, json]",
        "[env: VIDEOAPP_SPOOL_COMMIT_DELAY_MICROS=",
    ] {
        assert!(help.contains(shown), "{shown} not in {help}");
    }
}
