//! The media settings: where uploaded and processed videos are stored, the limits of an upload,
//! and how processing runs.

use std::path::PathBuf;
use std::time::Duration;

use clap::builder::TypedValueParser;
use clap::{value_parser, Args};
use secrecy::SecretString;
use url::Url;

use super::errors::{names, ConfigError, ConfigErrors};
use super::values::{boolean, http_url, password, positive_seconds, trim, InvalidValue};

pub const DEFAULT_UPLOAD_MAX_BYTES: u64 = 1 << 30;
pub const DEFAULT_VIDEO_MAX_SECONDS: u64 = 600;
pub const DEFAULT_VIDEO_MAX_SIDE: u32 = 4096;
/// Per shop: a few hundred phone videos with their outputs.
pub const DEFAULT_SHOP_QUOTA_BYTES: u64 = 50 << 30;

#[derive(Debug, Clone, Args)]
pub struct MediaSettings {
    /// Directory of the embedded object store (uploads and processed videos), served at /media.
    /// Unused when an S3 bucket is set.
    #[arg(
        long,
        env = "VIDEOAPP_MEDIA_DIR",
        global = true,
        value_name = "DIR",
        default_value = "media"
    )]
    pub media_dir: PathBuf,
    /// The URL the stored objects are read from by browsers, objects' names appended: a CDN in
    /// front of the bucket, or this service's /media. Default: http://{VIDEOAPP_LISTEN}/media
    /// with the directory store; required with a bucket.
    #[arg(
        long,
        env = "VIDEOAPP_MEDIA_PUBLIC_URL",
        global = true,
        value_name = "URL",
        value_parser = http_url
    )]
    pub media_public_url: Option<Url>,
    /// An S3-compatible bucket to store media in instead of the directory (several instances
    /// share it). The endpoint, region and credentials below go with it.
    #[arg(long, env = "VIDEOAPP_S3_BUCKET", global = true, value_name = "NAME")]
    pub s3_bucket: Option<String>,
    /// The S3 endpoint, e.g. http://127.0.0.1:3900; unset: the provider's default for the region.
    #[arg(
        long,
        env = "VIDEOAPP_S3_ENDPOINT",
        global = true,
        value_name = "URL",
        value_parser = http_url
    )]
    pub s3_endpoint: Option<Url>,
    /// The bucket's region.
    #[arg(
        long,
        env = "VIDEOAPP_S3_REGION",
        global = true,
        value_name = "REGION",
        default_value = "us-east-1"
    )]
    pub s3_region: String,
    /// The access key id for the bucket.
    #[arg(
        long,
        env = "VIDEOAPP_S3_ACCESS_KEY_ID",
        global = true,
        value_name = "ID"
    )]
    pub s3_access_key_id: Option<String>,
    /// The secret access key for the bucket.
    #[arg(
        long,
        env = "VIDEOAPP_S3_SECRET_ACCESS_KEY",
        global = true,
        hide_env_values = true,
        value_name = "SECRET",
        value_parser = password
    )]
    pub s3_secret_access_key: Option<SecretString>,
    /// The largest file an upload or import may be, in bytes.
    #[arg(
        long,
        env = "VIDEOAPP_UPLOAD_MAX_BYTES",
        global = true,
        value_name = "BYTES",
        default_value_t = DEFAULT_UPLOAD_MAX_BYTES,
        value_parser = trim(value_parser!(u64).range(1..))
    )]
    pub upload_max_bytes: u64,
    /// The longest video taken, in seconds.
    #[arg(
        long,
        env = "VIDEOAPP_VIDEO_MAX_SECONDS",
        global = true,
        value_name = "SECONDS",
        default_value_t = DEFAULT_VIDEO_MAX_SECONDS,
        value_parser = trim(value_parser!(u64).range(1..=86_400))
    )]
    pub video_max_seconds: u64,
    /// The largest width or height of a video taken, in pixels.
    #[arg(
        long,
        env = "VIDEOAPP_VIDEO_MAX_SIDE",
        global = true,
        value_name = "PIXELS",
        default_value_t = DEFAULT_VIDEO_MAX_SIDE,
        value_parser = trim(value_parser!(u32).range(64..=16_384))
    )]
    pub video_max_side: u32,
    /// Bytes of media one shop may store (sources and outputs); an upload that would pass it is
    /// refused.
    #[arg(
        long,
        env = "VIDEOAPP_SHOP_QUOTA_BYTES",
        global = true,
        value_name = "BYTES",
        default_value_t = DEFAULT_SHOP_QUOTA_BYTES,
        value_parser = trim(value_parser!(u64).range(1..))
    )]
    pub shop_quota_bytes: u64,
    /// An upload not finished this long after it began expires, and its bytes are removed.
    #[arg(
        long,
        env = "VIDEOAPP_UPLOAD_EXPIRY_SECONDS",
        global = true,
        value_name = "SECONDS",
        default_value = "86400",
        value_parser = positive_seconds()
    )]
    pub upload_expiry: Duration,
    /// Processing workers this instance runs (0: none; `videoapp worker` runs them elsewhere).
    #[arg(
        long,
        env = "VIDEOAPP_MEDIA_WORKERS",
        global = true,
        value_name = "COUNT",
        default_value_t = 1,
        value_parser = trim(value_parser!(u32).range(0..=64))
    )]
    pub media_workers: u32,
    /// Threads one ffmpeg run may use.
    #[arg(
        long,
        env = "VIDEOAPP_FFMPEG_THREADS",
        global = true,
        value_name = "COUNT",
        default_value_t = 2,
        value_parser = trim(value_parser!(u32).range(1..=64))
    )]
    pub ffmpeg_threads: u32,
    /// The longest one ffmpeg run may take, in seconds, before it is stopped and the job retried.
    #[arg(
        long,
        env = "VIDEOAPP_FFMPEG_TIMEOUT_SECONDS",
        global = true,
        value_name = "SECONDS",
        default_value = "1800",
        value_parser = positive_seconds()
    )]
    pub ffmpeg_timeout: Duration,
    /// A processing job's lease: a worker renews it while it works; one that stops renewing (it
    /// died or hangs) loses the job to another worker this long after its last renewal.
    #[arg(
        long,
        env = "VIDEOAPP_MEDIA_JOB_LEASE_SECONDS",
        global = true,
        value_name = "SECONDS",
        default_value = "60",
        value_parser = trim(value_parser!(u64).range(3..=3600).map(Duration::from_secs))
    )]
    pub media_job_lease: Duration,
    /// Objects no video references are deleted once they are this old (younger ones may belong
    /// to an upload or a run in progress).
    #[arg(
        long,
        env = "VIDEOAPP_MEDIA_SWEEP_GRACE_SECONDS",
        global = true,
        value_name = "SECONDS",
        default_value = "86400",
        value_parser = trim(value_parser!(u64).range(1..).map(Duration::from_secs))
    )]
    pub media_sweep_grace: Duration,
    /// Lets URL imports fetch plain http from loopback addresses: for tests and the demo only.
    #[arg(
        long,
        env = "VIDEOAPP_IMPORT_ALLOW_LOOPBACK_HTTP",
        global = true,
        value_name = "BOOL",
        default_value = "false",
        value_parser = boolean
    )]
    pub import_allow_loopback_http: bool,
}

/// Where media objects are kept.
#[derive(Debug, Clone)]
pub enum MediaStorage {
    /// The embedded default: a directory, served by the service at /media.
    Directory(PathBuf),
    S3(S3Config),
}

#[derive(Debug, Clone)]
pub struct S3Config {
    pub bucket: String,
    pub endpoint: Option<Url>,
    pub region: String,
    pub access_key_id: Option<String>,
    pub secret_access_key: Option<SecretString>,
}

/// The limits an upload or import is held to.
#[derive(Debug, Clone, Copy)]
pub struct MediaLimits {
    pub max_bytes: u64,
    pub max_duration: Duration,
    pub max_side: u32,
    pub shop_quota_bytes: u64,
    pub upload_expiry: Duration,
}

#[cfg(test)]
impl MediaLimits {
    /// The default limits (1 GiB, 10 minutes, 4096 px a side), for tests that vary one of them.
    pub fn for_tests() -> MediaLimits {
        MediaLimits {
            max_bytes: 1 << 30,
            max_duration: Duration::from_secs(600),
            max_side: 4096,
            shop_quota_bytes: 1 << 40,
            upload_expiry: Duration::from_secs(86_400),
        }
    }
}

/// What the media parts of `serve` and `worker` run with.
#[derive(Debug, Clone)]
pub struct MediaConfig {
    pub storage: MediaStorage,
    /// `None` with the directory store: `serve` uses its own address.
    pub public_url: Option<Url>,
    pub limits: MediaLimits,
    pub workers: u32,
    pub job_lease: Duration,
    pub sweep_grace: Duration,
    pub ffmpeg_threads: u32,
    pub ffmpeg_timeout: Duration,
    pub import_allow_loopback_http: bool,
}

impl MediaSettings {
    pub fn media_config(&self) -> Result<MediaConfig, ConfigErrors> {
        let storage = match &self.s3_bucket {
            None => MediaStorage::Directory(self.media_dir.clone()),
            Some(bucket) if bucket.trim().is_empty() => {
                return Err(invalid("s3_bucket", InvalidValue::Empty.to_string()))
            }
            Some(bucket) => MediaStorage::S3(S3Config {
                bucket: bucket.trim().to_string(),
                endpoint: self.s3_endpoint.clone(),
                region: self.s3_region.clone(),
                access_key_id: self.s3_access_key_id.clone(),
                secret_access_key: self.s3_secret_access_key.clone(),
            }),
        };
        let public_url = match (&storage, &self.media_public_url) {
            (MediaStorage::S3(_), None) => {
                let (bucket, _) = names("s3_bucket");
                return Err(invalid(
                    "media_public_url",
                    format!("is required with {bucket}: the address browsers read objects at"),
                ));
            }
            (_, url) => url.clone(),
        };
        Ok(MediaConfig {
            storage,
            public_url,
            limits: MediaLimits {
                max_bytes: self.upload_max_bytes,
                max_duration: Duration::from_secs(self.video_max_seconds),
                max_side: self.video_max_side,
                shop_quota_bytes: self.shop_quota_bytes,
                upload_expiry: self.upload_expiry,
            },
            workers: self.media_workers,
            job_lease: self.media_job_lease,
            sweep_grace: self.media_sweep_grace,
            ffmpeg_threads: self.ffmpeg_threads,
            ffmpeg_timeout: self.ffmpeg_timeout,
            import_allow_loopback_http: self.import_allow_loopback_http,
        })
    }
}

fn invalid(id: &str, reason: String) -> ConfigErrors {
    let (env, _) = names(id);
    ConfigErrors(vec![ConfigError::Invalid {
        env,
        flag: None,
        reason,
    }])
}
