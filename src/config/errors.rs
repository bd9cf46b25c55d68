//! What can be wrong with the settings, and how each problem is named: by its environment
//! variable and its flag, all of them on one line.

use clap::{Args, Command};

use super::settings::Settings;

/// Both values, or the problems of either or both.
pub fn both<A, B>(
    a: Result<A, ConfigErrors>,
    b: Result<B, ConfigErrors>,
) -> Result<(A, B), ConfigErrors> {
    match (a, b) {
        (Ok(a), Ok(b)) => Ok((a, b)),
        (Err(e), Ok(_)) | (Ok(_), Err(e)) => Err(e),
        (Err(ConfigErrors(mut a)), Err(ConfigErrors(b))) => {
            a.extend(b);
            Err(ConfigErrors(a))
        }
    }
}

pub(super) fn required<'a, T>(value: Option<&'a T>, id: &str) -> Result<&'a T, ConfigErrors> {
    value.ok_or_else(|| {
        let (env, flag) = names(id);
        ConfigErrors(vec![ConfigError::Missing { env, flag }])
    })
}

/// The environment variable and flag of the setting `id` (its field's name).
pub(super) fn names(id: &str) -> (String, String) {
    let command = Settings::augment_args(Command::new("videoapp"));
    let arg = command
        .get_arguments()
        .find(|arg| arg.get_id() == id)
        .expect("a setting of that name");
    let env = arg.get_env().expect("every setting has a variable");
    let flag = arg.get_long().expect("every setting has a flag");
    (env.to_string_lossy().into_owned(), flag.to_string())
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// A setting the command needs is not given.
    Missing { env: String, flag: String },
    /// A setting's value is malformed; `flag` is set when the value came from the command line.
    Invalid {
        env: String,
        flag: Option<String>,
        reason: String,
    },
}

impl ConfigError {
    /// The setting's environment variable.
    pub fn env(&self) -> &str {
        match self {
            ConfigError::Missing { env, .. } | ConfigError::Invalid { env, .. } => env,
        }
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigError::Missing { env, flag } => {
                write!(f, "missing required setting {env} (or --{flag})")
            }
            ConfigError::Invalid {
                env,
                flag: None,
                reason,
            } => write!(f, "invalid setting {env}: {reason}"),
            ConfigError::Invalid {
                env,
                flag: Some(flag),
                reason,
            } => write!(f, "invalid setting {env} (--{flag}): {reason}"),
        }
    }
}

/// Every problem found with the settings. Shown on one line: the missing settings together, then
/// each malformed one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigErrors(pub(super) Vec<ConfigError>);

impl ConfigErrors {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &ConfigError> {
        self.0.iter()
    }

    /// What a command built from the settings, if neither these problems (found while parsing)
    /// nor the command found any; else all of them. A setting found malformed was parsed as if
    /// it were not given: that it is then missing goes without saying.
    pub fn and<T>(mut self, built: Result<T, ConfigErrors>) -> Result<T, ConfigErrors> {
        match built {
            Ok(value) if self.is_empty() => Ok(value),
            Ok(_) => Err(self),
            Err(ConfigErrors(more)) => {
                for problem in more {
                    if !self.0.iter().any(|known| known.env() == problem.env()) {
                        self.0.push(problem);
                    }
                }
                Err(self)
            }
        }
    }
}

impl std::fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let missing: Vec<String> = self
            .iter()
            .filter_map(|problem| match problem {
                ConfigError::Missing { env, flag } => Some(format!("{env} (or --{flag})")),
                ConfigError::Invalid { .. } => None,
            })
            .collect();
        let mut parts = Vec::new();
        match missing.len() {
            0 => {}
            1 => parts.push(format!("missing required setting {}", missing[0])),
            _ => parts.push(format!("missing required settings {}", missing.join(", "))),
        }
        parts.extend(
            self.iter()
                .filter(|problem| matches!(problem, ConfigError::Invalid { .. }))
                .map(ToString::to_string),
        );
        f.write_str(&parts.join("; "))
    }
}

impl std::error::Error for ConfigErrors {}
