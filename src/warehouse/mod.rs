//! ClickHouse access: the client built from config, readiness, the schema migrations, merging the
//! aggregates' quiet partitions, privacy deletions, and the record of what changed in each shop's
//! numbers.

pub mod changes;
pub mod cluster;
pub mod compaction;
pub mod error;
pub mod migrations;
pub mod privacy;
pub mod rows;

use std::time::Duration;

use clickhouse::insert::Insert;
use clickhouse::Client;
use secrecy::ExposeSecret;

use crate::config::ClickHouseConfig;
use cluster::Cluster;
use error::WarehouseError;
use rows::EventRow;

/// The aggregates: the `SummingMergeTree` tables the materialized views fill from `events`, each
/// holding rows of a shop. Merging their parts only sums rows (`compaction`).
pub const AGGREGATES: [&str; 15] = [
    "video_daily",
    "video_monthly",
    "video_yearly",
    "widget_daily",
    "widget_monthly",
    "shop_daily",
    "video_daily_by_video",
    "shop_daily_by_dimension",
    "widget_daily_by_dimension",
    "video_daily_by_dimension",
    "video_monthly_by_dimension",
    "video_yearly_by_dimension",
    "shop_daily_by_dimensions",
    "video_daily_by_dimensions",
    "widget_daily_by_dimensions",
];

const PING_SQL: &str = include_str!("../../sql/03_ping.sql");

/// Handle to the service's ClickHouse database. Cheap to clone.
#[derive(Clone)]
pub struct Warehouse {
    client: Client,
    server: Client,
    database: String,
    cluster: Option<Cluster>,
}

impl Warehouse {
    pub fn new(config: &ClickHouseConfig) -> Self {
        let server = Client::default()
            .with_url(config.url.as_str())
            .with_user(config.user.as_str())
            .with_password(config.password.expose_secret());
        let cluster = config.cluster.as_ref().map(|name| Cluster {
            name: name.clone(),
            database: config.database.clone(),
        });
        let mut client = server.clone().with_database(config.database.as_str());
        if cluster.is_some() {
            client = client
                // An insert returns once a replica of every shard has its rows, not when the node
                // it reached has queued them for later.
                .with_option("insert_distributed_sync", "1")
                // Each event is counted once by the shipper (a batch that may have landed is
                // checked before it is sent again), not by the replicated tables' block
                // deduplication, whose reach differs between versions: current ClickHouse still
                // passes a block it dropped as a repeat to the views, so the raw rows and the
                // aggregates would disagree.
                .with_option("insert_deduplicate", "0")
                // Reads and writes go to the same replica of each shard while it is up, so the
                // shipper's check sees what its insert wrote; and a replica more than a few
                // seconds behind (just back from an outage) is never read: another one is, or the
                // query fails (503), rather than answer with rows missing.
                .with_option("load_balancing", "in_order")
                .with_option("max_replica_delay_for_distributed_queries", "5")
                .with_option("fallback_to_stale_replicas_for_distributed_queries", "0");
        }
        Warehouse {
            client,
            server,
            database: config.database.clone(),
            cluster,
        }
    }

    /// The cluster the tables span, if the service runs on one.
    pub fn cluster(&self) -> Option<&Cluster> {
        self.cluster.as_ref()
    }

    /// A client whose unqualified table names resolve in the service's database.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// An insert of rows into `events`. Each insert fills every aggregate through its
    /// materialized view; ClickHouse runs the views one after another unless told to run them
    /// at once, which on two cores took 40% less time for two days' events (BENCHMARKS.md).
    pub fn insert_events<'a>(&self) -> Result<Insert<EventRow<'a>>, clickhouse::error::Error> {
        let client = self.client.clone();
        client
            .with_option("parallel_view_processing", "1")
            .insert("events")
    }

    pub fn database(&self) -> &str {
        &self.database
    }

    /// Reachable, and the service's database exists.
    pub async fn ping(&self, timeout: Duration) -> Result<(), WarehouseError> {
        let query = self.client.query(PING_SQL).fetch_one::<u8>();
        match tokio::time::timeout(timeout, query).await {
            Ok(result) => result.map(drop).map_err(WarehouseError::from),
            Err(_) => Err(WarehouseError::timed_out(timeout)),
        }
    }
}
