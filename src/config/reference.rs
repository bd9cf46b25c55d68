//! docs/CONFIGURATION.md, written from the settings' own definitions (variable, flag, default and
//! help text), so the reference cannot drift from the code: a test compares the two.

use std::fmt::Write as _;

use clap::{Args, Command};

use super::Settings;

const HEADER: &str = "\
# Configuration

Every setting is an environment variable with a matching flag (`videoapp --help` shows the same;
a flag wins over its variable, and a variable that is empty counts as unset). Missing or malformed
settings stop the command at start, with exit code 2 and one line that names every one of them.
`serve` needs `DATABASE_URL`, `CLICKHOUSE_URL`, `VIDEOAPP_PROXY_SECRET` and `VIDEOAPP_ADMIN_TOKEN`;
`migrate` and `generate` need `DATABASE_URL` and `CLICKHOUSE_URL`, `dev-store` needs
`DATABASE_URL` and `VIDEOAPP_PROXY_SECRET`, `sign` only `VIDEOAPP_PROXY_SECRET`, `schema` none.

This file is generated from the settings' definitions (`src/config/settings.rs`,
`src/config/media.rs`): `VIDEOAPP_WRITE_REFERENCE=1 cargo test --lib configuration_reference`
rewrites it.

| variable | flag | default | |
|---|---|---|---|
";

/// The reference, as docs/CONFIGURATION.md holds it.
pub fn markdown() -> String {
    let command = Settings::augment_args(Command::new("videoapp"));
    let mut out = String::from(HEADER);
    for arg in command.get_arguments().filter(|a| !a.is_hide_set()) {
        let Some(variable) = arg.get_env() else {
            continue;
        };
        let flag = arg
            .get_long()
            .map(|long| format!("`--{long}`"))
            .unwrap_or_default();
        let defaults: Vec<String> = arg
            .get_default_values()
            .iter()
            .map(|v| format!("`{}`", v.to_string_lossy()))
            .collect();
        let default = if arg.is_hide_default_value_set() || defaults == ["``"] {
            "empty".to_string()
        } else if defaults.is_empty() {
            "unset".to_string()
        } else {
            defaults.join(", ")
        };
        let help = arg
            .get_long_help()
            .or(arg.get_help())
            .map(ToString::to_string)
            .unwrap_or_default();
        let mut help = help.split_whitespace().collect::<Vec<_>>().join(" ");
        let choices: Vec<String> = arg
            .get_possible_values()
            .iter()
            .filter(|v| !v.is_hide_set())
            .map(|v| format!("`{}`", v.get_name()))
            .collect();
        if !choices.is_empty() {
            write!(help, " (one of {})", choices.join(", ")).ok();
        }
        writeln!(
            out,
            "| `{}` | {flag} | {default} | {} |",
            variable.to_string_lossy(),
            help.replace('|', "\\|")
        )
        .ok();
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn configuration_reference_is_the_settings_as_defined() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/CONFIGURATION.md");
        let now = super::markdown();
        if std::env::var_os("VIDEOAPP_WRITE_REFERENCE").is_some() {
            std::fs::write(path, &now).expect("docs/CONFIGURATION.md written");
        }
        let written = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            written == now,
            "docs/CONFIGURATION.md is not the settings as defined: run \
             `VIDEOAPP_WRITE_REFERENCE=1 cargo test --lib configuration_reference`"
        );
    }
}
