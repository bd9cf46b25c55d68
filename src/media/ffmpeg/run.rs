//! One ffmpeg or ffprobe child, locked down: a command line built from typed values, an empty
//! environment but `PATH`, no standard input, a private working directory, a wall-clock limit
//! after which it is killed, and its standard error kept (bounded) for the logs.

use std::ffi::OsString;
use std::fmt;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};

/// Where the tools are looked for: the system's directories only, never the service's own `PATH`.
const TOOL_PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// Standard error kept for the logs: the first lines name the cause; a damaged file can make a
/// decoder complain thousands of times.
const STDERR_KEPT: usize = 8 * 1024;
/// The only protocols an input or output may use: plain files, and pipes for `-progress`.
const PROTOCOLS: &str = "file,pipe";
/// The protocols of a source given as a list of our own files read as one
/// (`MediaStore::readable_in_place`): the list and the files it names, nothing else.
const PARTS_PROTOCOLS: &str = "concatf,file";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tool {
    Ffmpeg,
    Ffprobe,
}

impl Tool {
    fn program(self) -> &'static str {
        match self {
            Tool::Ffmpeg => "ffmpeg",
            Tool::Ffprobe => "ffprobe",
        }
    }
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.program())
    }
}

/// A command line under construction. Every path is given as `file:…` so that no name can be
/// read as another protocol or an option.
#[derive(Debug, Clone)]
pub(crate) struct CommandLine {
    tool: Tool,
    threads: u32,
    args: Vec<OsString>,
}

impl CommandLine {
    /// ffmpeg with the switches every run shares: quiet but for errors, never reading stdin,
    /// overwriting its own earlier outputs (a retried run), filters on bounded threads.
    pub(crate) fn ffmpeg(threads: u32) -> CommandLine {
        let mut line = CommandLine {
            tool: Tool::Ffmpeg,
            threads,
            args: Vec::new(),
        };
        line.args([
            "-hide_banner",
            "-loglevel",
            "error",
            "-nostdin",
            "-nostats",
            "-y",
        ])
        .arg("-filter_threads")
        .arg(threads.to_string())
        .arg("-filter_complex_threads")
        .arg(threads.to_string());
        line
    }

    pub(crate) fn ffprobe(threads: u32) -> CommandLine {
        let mut line = CommandLine {
            tool: Tool::Ffprobe,
            threads,
            args: Vec::new(),
        };
        line.args(["-hide_banner", "-loglevel", "error"])
            .arg("-threads")
            .arg(threads.to_string());
        line
    }

    pub(crate) fn arg(&mut self, arg: impl Into<OsString>) -> &mut CommandLine {
        self.args.push(arg.into());
        self
    }

    pub(crate) fn args<I, S>(&mut self, args: I) -> &mut CommandLine
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// An input read only through the `file` protocol and only by the named demuxers
    /// (ffmpeg's names, comma-separated), decoded on bounded threads.
    pub(crate) fn input(&mut self, path: &Path, demuxers: &str) -> &mut CommandLine {
        let threads = self.threads.to_string();
        let url = self.whitelists(path, demuxers);
        self.args(["-threads", &threads]).arg("-i").arg(url)
    }

    /// An output written only through the `file` protocol, encoded on bounded threads, carrying
    /// nothing of the source's metadata (titles, places, device names) or chapters.
    pub(crate) fn output(&mut self, path: &Path) -> &mut CommandLine {
        let threads = self.threads.to_string();
        self.args(["-map_metadata", "-1", "-map_chapters", "-1"])
            .args(["-threads", &threads])
            .args(["-protocol_whitelist", PROTOCOLS])
            .arg(file_url(path))
    }

    /// ffprobe's one input, read only through the `file` protocol and by the named demuxers.
    pub(crate) fn probe_input(&mut self, path: &Path, demuxers: &str) -> &mut CommandLine {
        let url = self.whitelists(path, demuxers);
        self.arg(url)
    }

    /// Limits the reading of the input at `path` to its protocols and `demuxers`; returns the
    /// URL it is then read by.
    fn whitelists(&mut self, path: &Path, demuxers: &str) -> OsString {
        let (url, protocols) = input_url(path);
        self.args([
            "-protocol_whitelist",
            protocols,
            "-format_whitelist",
            demuxers,
        ]);
        url
    }
}

/// How ffmpeg reads an input: a file, or, for a list of parts (named so by this service, never
/// by a user), the files the list names one after another as one file, seekable across them.
fn input_url(path: &Path) -> (OsString, &'static str) {
    let is_parts_list = path
        .extension()
        .is_some_and(|ext| ext == crate::media::store::PARTS_LIST_EXTENSION);
    if is_parts_list {
        let mut url = OsString::from("concatf:");
        url.push(file_url(path));
        return (url, PARTS_PROTOCOLS);
    }
    (file_url(path), PROTOCOLS)
}

/// `file:` + the path: a name that starts with a protocol (`http:…`) or a dash stays a file.
fn file_url(path: &Path) -> OsString {
    let mut url = OsString::from("file:");
    url.push(path.as_os_str());
    url
}

/// What the child's standard output is for.
pub(crate) enum Stdout<'a> {
    Ignore,
    /// Kept, up to this many bytes (more is a failure).
    Keep(usize),
    /// `-progress pipe:1`: each `out_time_us` is handed over, in microseconds.
    Progress(&'a (dyn Fn(u64) + Send + Sync)),
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum RunError {
    #[error("{tool} could not be started")]
    Spawn {
        tool: Tool,
        #[source]
        source: std::io::Error,
    },
    #[error("{tool} was stopped after {}s, its time limit", .limit.as_secs_f32())]
    TimedOut { tool: Tool, limit: Duration },
    /// The tool ran and failed; what it said is the source, so that logs (`{:#}`) show it and
    /// a plain message does not.
    #[error("{tool} failed ({status})")]
    Failed {
        tool: Tool,
        status: ExitStatus,
        #[source]
        stderr: Stderr,
    },
    #[error("{tool} wrote more than {limit} bytes of output")]
    TooMuchOutput { tool: Tool, limit: usize },
    #[error("reading from {tool}")]
    Io {
        tool: Tool,
        #[source]
        source: std::io::Error,
    },
}

impl RunError {
    /// Whether the tool itself said no (as opposed to being killed, or not starting): what a
    /// probe takes as an unreadable file.
    pub(crate) fn exited_with_error(&self) -> bool {
        matches!(self, RunError::Failed { status, .. } if status.code().is_some())
    }

    /// What the tool wrote to standard error before failing.
    pub(crate) fn stderr(&self) -> Option<&str> {
        match self {
            RunError::Failed { stderr, .. } => Some(&stderr.0),
            _ => None,
        }
    }
}

/// What a tool wrote to standard error, bounded.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Stderr(String);

/// Runs `line` in `dir` (its working directory), killing it if it outlives `limit` or if the
/// future is dropped. Returns standard output when kept.
pub(crate) async fn run(
    line: &CommandLine,
    dir: &Path,
    limit: Duration,
    stdout: Stdout<'_>,
) -> Result<Vec<u8>, RunError> {
    let tool = line.tool;
    let mut command = tokio::process::Command::new(tool.program());
    command
        .args(&line.args)
        .env_clear()
        .env("PATH", TOOL_PATH)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(match stdout {
            Stdout::Ignore => Stdio::null(),
            Stdout::Keep(_) | Stdout::Progress(_) => Stdio::piped(),
        })
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command
        .spawn()
        .map_err(|source| RunError::Spawn { tool, source })?;
    let child_stdout = child.stdout.take();
    let child_stderr = child.stderr.take();

    let finished = async {
        let (kept, stderr, status) = tokio::join!(
            read_stdout(child_stdout, &stdout),
            read_stderr(child_stderr),
            child.wait()
        );
        let io = |source| RunError::Io { tool, source };
        let status = status.map_err(io)?;
        let stderr = stderr.map_err(io)?;
        if !status.success() {
            return Err(RunError::Failed {
                tool,
                status,
                stderr: Stderr(stderr),
            });
        }
        match kept.map_err(io)? {
            Kept::Bytes(bytes) => Ok(bytes),
            Kept::TooMuch(limit) => Err(RunError::TooMuchOutput { tool, limit }),
        }
    };
    match tokio::time::timeout(limit, finished).await {
        Ok(result) => result,
        Err(_) => {
            // Killed and reaped before returning, so nothing of it outlives the step.
            let _ = child.kill().await;
            Err(RunError::TimedOut { tool, limit })
        }
    }
}

enum Kept {
    Bytes(Vec<u8>),
    TooMuch(usize),
}

async fn read_stdout(
    out: Option<impl AsyncRead + Unpin>,
    use_: &Stdout<'_>,
) -> std::io::Result<Kept> {
    let Some(out) = out else {
        return Ok(Kept::Bytes(Vec::new()));
    };
    match *use_ {
        Stdout::Ignore => Ok(Kept::Bytes(Vec::new())),
        Stdout::Keep(limit) => {
            let mut bytes = Vec::new();
            let mut out = out.take(limit as u64 + 1);
            out.read_to_end(&mut bytes).await?;
            if bytes.len() > limit {
                // Drained, so the child is not left blocked on a full pipe.
                tokio::io::copy(&mut out.into_inner(), &mut tokio::io::sink()).await?;
                return Ok(Kept::TooMuch(limit));
            }
            Ok(Kept::Bytes(bytes))
        }
        Stdout::Progress(report) => {
            let mut lines = BufReader::new(out).lines();
            while let Some(line) = lines.next_line().await? {
                if let Some(us) = line
                    .strip_prefix("out_time_us=")
                    .and_then(|v| v.trim().parse::<u64>().ok())
                {
                    report(us);
                }
            }
            Ok(Kept::Bytes(Vec::new()))
        }
    }
}

async fn read_stderr(err: Option<impl AsyncRead + Unpin>) -> std::io::Result<String> {
    let Some(err) = err else {
        return Ok(String::new());
    };
    let mut kept = Vec::new();
    let mut err = err.take(STDERR_KEPT as u64);
    err.read_to_end(&mut kept).await?;
    tokio::io::copy(&mut err.into_inner(), &mut tokio::io::sink()).await?;
    Ok(String::from_utf8_lossy(&kept).trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_list_of_parts_is_read_through_concatf_and_nothing_else_opens_another_protocol() {
        let (url, protocols) = input_url(Path::new("/work/job/source.parts"));
        assert_eq!(url, "concatf:file:/work/job/source.parts");
        assert_eq!(protocols, "concatf,file");
        for path in ["/work/job/source", "/work/job/http:x.parts.mp4", "-i"] {
            let (url, protocols) = input_url(Path::new(path));
            assert_eq!(url, OsString::from(format!("file:{path}")));
            assert_eq!(protocols, "file,pipe");
        }
    }
}
