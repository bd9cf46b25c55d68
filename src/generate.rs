//! `videoapp generate`: a realistic data set for the scale benchmark, written straight into
//! ClickHouse (the daily views fill as usual) with its catalog in Postgres.

use std::time::Instant;

use anyhow::Context;
use chrono::{Days, Utc};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use uuid::Uuid;

use crate::analytics::keys::{self, NewApiKey};
use crate::catalog::domain::{ShopDomain, TextLine, Timezone, VideoStatus};
use crate::catalog::shops::{self, ShopSettings};
use crate::catalog::videos::{self, NewVideo};
use crate::ingest::event::{EventType, SpoolEvent, REVENUE_SCALE};
use crate::warehouse::rows::EventRow;
use crate::warehouse::Warehouse;

#[derive(Debug, Clone)]
pub struct Plan {
    pub shops: usize,
    /// In all, spread over the shops.
    pub videos: usize,
    pub days: u64,
    pub events: u64,
    pub seed: u64,
}

#[derive(Debug, Serialize)]
pub struct GeneratedShop {
    pub domain: String,
    pub timezone: String,
    pub api_key: String,
    pub videos: usize,
}

const TIMEZONES: [&str; 4] = ["America/New_York", "UTC", "Asia/Kathmandu", "Europe/Berlin"];
const INSERT_ROWS: usize = 200_000;

pub async fn run(
    pool: &sqlx::PgPool,
    warehouse: &Warehouse,
    plan: &Plan,
) -> anyhow::Result<Vec<GeneratedShop>> {
    let mut rng = StdRng::seed_from_u64(plan.seed);
    let run = Uuid::now_v7().simple().to_string()[..8].to_string();
    let mut shops_out = Vec::new();
    let mut catalog: Vec<(ShopDomain, Timezone, Vec<Uuid>)> = Vec::new();
    for s in 0..plan.shops {
        let domain =
            ShopDomain::parse(&format!("bench-{run}-{s}.myshopify.com")).expect("valid domain");
        let timezone = Timezone::parse(TIMEZONES[s % TIMEZONES.len()]).expect("valid timezone");
        let settings = ShopSettings {
            name: Some(text_line(format!("Bench shop {s}"))?),
            timezone: Some(timezone),
            ..ShopSettings::default()
        };
        shops::upsert(pool, &domain, settings)
            .await
            .context("create shop")?;
        let count = plan.videos / plan.shops + usize::from(s < plan.videos % plan.shops);
        let mut ids = Vec::with_capacity(count);
        for v in 0..count {
            let video = NewVideo {
                title: text_line(format!("Video {v:04} of shop {s}"))?,
                thumbnail: text_line(format!("https://cdn.example.com/{s}/{v}.jpg"))?,
                video_url: text_line(format!("https://cdn.example.com/{s}/{v}.mp4"))?,
                mini_version_url: TextLine::default(),
                duration: f64::from(rng.gen_range(5..180)),
                status: if v % 10 == 9 {
                    VideoStatus::Draft
                } else {
                    VideoStatus::Published
                },
                product_ids: Vec::new(),
            };
            ids.push(
                videos::create(pool, &domain, video)
                    .await
                    .context("create video")?
                    .id,
            );
        }
        let key = keys::create(
            pool,
            &domain,
            NewApiKey {
                name: text_line("scale bench".into())?,
            },
        )
        .await
        .context("create key")?;
        shops_out.push(GeneratedShop {
            domain: domain.to_string(),
            timezone: String::from(timezone),
            api_key: key.key,
            videos: count,
        });
        catalog.push((domain, timezone, ids));
    }

    let today = Utc::now().date_naive();
    let first_day = today - Days::new(plan.days.saturating_sub(1));
    let started = Instant::now();
    let mut written = 0u64;
    let batch_id = Uuid::now_v7();
    while written < plan.events {
        let rows = (plan.events - written).min(INSERT_ROWS as u64) as usize;
        let events: Vec<SpoolEvent> = (0..rows)
            .map(|_| random_event(&mut rng, &catalog, first_day, plan.days))
            .collect();
        let mut insert = warehouse.client().insert::<EventRow<'_>>("events")?;
        for event in &events {
            insert.write(&EventRow::new(batch_id, event)).await?;
        }
        insert.end().await.context("insert events")?;
        written += rows as u64;
        eprintln!(
            "{written} / {} events ({:.0}/s)",
            plan.events,
            written as f64 / started.elapsed().as_secs_f64()
        );
    }
    Ok(shops_out)
}

fn text_line(raw: String) -> anyhow::Result<TextLine> {
    TextLine::parse(&raw).with_context(|| format!("generated text {raw:?}"))
}

fn random_event(
    rng: &mut StdRng,
    catalog: &[(ShopDomain, Timezone, Vec<Uuid>)],
    first_day: chrono::NaiveDate,
    days: u64,
) -> SpoolEvent {
    let (shop, _, videos) = &catalog[rng.gen_range(0..catalog.len())];
    // A few videos get most of the traffic, as on real stores.
    let skewed = (rng.gen::<f64>().powi(3) * videos.len() as f64) as usize;
    let video = videos[skewed.min(videos.len() - 1)];
    let roll: u32 = rng.gen_range(0..100);
    let event_type = match roll {
        0..=59 => EventType::Impression,
        60..=84 => EventType::View,
        85..=92 => EventType::Click,
        93..=96 => EventType::AddToCart,
        _ => EventType::CheckoutCompleted,
    };
    let local_date = first_day + Days::new(rng.gen_range(0..days));
    let seconds = local_date
        .and_hms_opt(0, 0, 0)
        .expect("midnight")
        .and_utc()
        .timestamp()
        + rng.gen_range(0..86_400);
    let revenue_e4 = if event_type == EventType::CheckoutCompleted {
        rng.gen_range(500..20_000) * (REVENUE_SCALE / 100)
    } else {
        0
    };
    SpoolEvent {
        event_id: Uuid::new_v4(),
        client_event_id: false,
        shop: shop.to_string(),
        local_date,
        event_time: seconds,
        received_at: seconds,
        timestamp_replaced: false,
        event_type,
        attribution: None,
        video_id: video.to_string(),
        widget_id: String::new(),
        session_id: format!("s{}", rng.gen_range(0..1_000_000)),
        customer_id: String::new(),
        product_id: String::new(),
        order_id: String::new(),
        revenue_e4,
        currency: "USD".into(),
        product_ids: Vec::new(),
    }
}
