//! Reading the command line and the environment into the settings, so that every malformed
//! setting is named, not only the first.

use std::ffi::{OsStr, OsString};

use clap::builder::ValueParser;
use clap::error::{ContextKind, ContextValue};
use clap::parser::ValueSource;
use clap::{Arg, ArgAction, Args, Command, FromArgMatches, Parser};

use super::errors::{names, ConfigError, ConfigErrors};
use super::settings::Settings;

/// Parses the command line and the environment into `P`, as `P::parse()` does, except that a
/// malformed setting does not stop the parse at the first: every setting given (as a flag, else
/// as its variable) is first checked with its own value parser, the malformed ones are left out
/// of the parse, and they come back named, to be reported with what the command finds missing.
/// A variable that is empty or only whitespace counts as unset. Anything else wrong with the
/// command line (an unknown flag, a subcommand's own argument) and `--help` are clap's to report.
pub fn parse<P: Parser>() -> (P, ConfigErrors) {
    parse_from(P::command(), std::env::args_os())
}

pub(super) fn parse_from<P: FromArgMatches>(
    mut command: Command,
    argv: impl IntoIterator<Item = OsString>,
) -> (P, ConfigErrors) {
    let mut argv: Vec<OsString> = argv.into_iter().collect();
    // The settings' arguments, those flattened into them (the media's) too: a group with a
    // flattened part names no members, so they are read off the settings alone.
    let ids: Vec<clap::Id> = Settings::augment_args(Command::new("videoapp"))
        .get_arguments()
        .map(|arg| arg.get_id().clone())
        .collect();
    let settings: Vec<Arg> = command
        .get_arguments()
        .filter(|arg| ids.contains(arg.get_id()))
        .cloned()
        .collect();
    // What the command line gives each setting, unparsed. If it does not parse even so, the real
    // parse below reports why.
    let given = as_given(&command, &settings)
        .try_get_matches_from(&argv)
        .ok();
    let mut problems = Vec::new();
    for arg in &settings {
        let id = arg.get_id().as_str();
        let (env, flag) = names(id);
        let on_command_line =
            given.as_ref().and_then(|m| m.value_source(id)) == Some(ValueSource::CommandLine);
        if on_command_line {
            // The flag wins over the variable; clap would still parse the variable where the flag
            // follows the subcommand (a global flag's value reaches the top level only after).
            command = command.mut_arg(id, |arg| arg.env(None));
            if !arg.get_action().takes_values() {
                continue;
            }
            let value = given.as_ref().and_then(|m| m.get_one::<OsString>(id));
            if let Some(reason) = value.and_then(|value| refusal(arg, &flag, value)) {
                argv = without_option(argv, &flag);
                problems.push(ConfigError::Invalid {
                    env,
                    flag: Some(flag),
                    reason,
                });
            }
        } else if let Some(value) = arg.get_env().and_then(std::env::var_os) {
            let blank = value.to_str().is_some_and(|v| v.trim().is_empty());
            let refused = match blank {
                true => None,
                false => refusal(arg, &flag, &value),
            };
            if blank || refused.is_some() {
                command = command.mut_arg(id, |arg| arg.env(None));
            }
            if let Some(reason) = refused {
                problems.push(ConfigError::Invalid {
                    env,
                    flag: None,
                    reason,
                });
            }
        }
    }
    let matches = command
        .try_get_matches_from_mut(argv)
        .unwrap_or_else(|e| e.exit());
    let parsed = P::from_arg_matches(&matches).unwrap_or_else(|e| e.format(&mut command).exit());
    (parsed, ConfigErrors(problems))
}

/// `command` taking the settings' values as the command line gives them: no environment, no
/// value parsers.
fn as_given(command: &Command, settings: &[Arg]) -> Command {
    settings.iter().fold(command.clone(), |command, setting| {
        command.mut_arg(setting.get_id(), |arg| {
            let arg = arg.env(None);
            if arg.get_action().takes_values() {
                arg.value_parser(ValueParser::os_string())
            } else {
                arg
            }
        })
    })
}

/// `command` reading nothing from the environment.
pub(super) fn without_env(command: Command) -> Command {
    let ids: Vec<_> = command
        .get_arguments()
        .filter(|arg| arg.get_env().is_some())
        .map(|arg| arg.get_id().clone())
        .collect();
    ids.iter().fold(command, |command, id| {
        command.mut_arg(id, |arg| arg.env(None))
    })
}

/// Why `arg`'s own value parser refuses `value`, if it does. clap offers no way to call a value
/// parser on its own, so a command with only that argument parses `--flag=value`.
fn refusal(arg: &Arg, flag: &str, value: &OsStr) -> Option<String> {
    let probe = arg.clone().env(None).action(ArgAction::Set).global(false);
    let mut flag = OsString::from(format!("--{flag}="));
    flag.push(value);
    match Command::new("probe")
        .arg(probe)
        .try_get_matches_from([OsString::from("probe"), flag])
    {
        Ok(_) => None,
        Err(e) => Some(reason(&e, value)),
    }
}

/// What is wrong, in words: the value parser's own, or what clap knows. Never the value of a
/// secret: their parsers say what is wrong without repeating it.
fn reason(e: &clap::Error, value: &OsStr) -> String {
    let value = value.to_string_lossy();
    let value = value.trim();
    match std::error::Error::source(e) {
        Some(cause) if cause.is::<std::num::ParseIntError>() => {
            format!("'{value}' is not a whole number")
        }
        Some(cause) if cause.is::<std::num::TryFromIntError>() => format!("'{value}' is too large"),
        Some(cause) => cause.to_string(),
        None => match e.get(ContextKind::ValidValue) {
            Some(ContextValue::Strings(valid)) => {
                format!("'{value}' is not {}", valid.join(" or "))
            }
            _ => e.kind().as_str().unwrap_or("malformed").to_string(),
        },
    }
}

/// `argv` without the option `--flag` (given as `--flag value` or `--flag=value`).
pub(super) fn without_option(argv: Vec<OsString>, flag: &str) -> Vec<OsString> {
    let alone = format!("--{flag}");
    let joined = format!("--{flag}=");
    let mut kept = Vec::with_capacity(argv.len());
    let mut words = argv.into_iter();
    while let Some(word) = words.next() {
        if word == "--" {
            kept.push(word);
            kept.extend(words);
            break;
        }
        if word == alone.as_str() {
            words.next();
        } else if !word.to_str().is_some_and(|w| w.starts_with(&joined)) {
            kept.push(word);
        }
    }
    kept
}
