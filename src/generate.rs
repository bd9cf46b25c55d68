//! `videoapp generate`: a realistic data set for the scale benchmark, written straight into
//! ClickHouse (the daily views fill as usual) with its catalog (videos, widgets showing them, an
//! API key) in Postgres. The events come in time order, spread evenly over the days, and follow
//! from the seed: which video and widget, type, attribution of carts and orders, time of day and
//! revenue.

use std::time::Instant;

use anyhow::Context;
use chrono::{Days, NaiveDate, Utc};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use uuid::Uuid;

use crate::analytics::keys::{self, NewApiKey};
use crate::catalog::domain::{
    ClickBehavior, ModalLayout, ShopDomain, SourceType, TextLine, Timezone, VideoStatus, ViewStyle,
    WidgetStatus, WidgetType,
};
use crate::catalog::shops::{self, ShopSettings};
use crate::catalog::videos::{self, NewVideo};
use crate::catalog::widgets::{self, DisplayRules, NewWidget};
use crate::ingest::event::{
    Attribution, Country, Device, EventType, Placement, Source, SpoolEvent, REVENUE_SCALE,
};
use crate::warehouse::rows::EventRow;
use crate::warehouse::Warehouse;

/// What to generate; the command line of `videoapp generate`.
#[derive(Debug, Clone, clap::Args)]
pub struct Plan {
    #[arg(long, default_value_t = 4)]
    pub shops: usize,
    /// Videos in all, spread over the shops.
    #[arg(long, default_value_t = 1000)]
    pub videos: usize,
    /// Widgets per shop, of mixed types, each showing some of the shop's videos.
    #[arg(long, default_value_t = 50)]
    pub widgets: usize,
    /// Days of history, ending today.
    #[arg(long, default_value_t = 400)]
    pub days: u64,
    #[arg(long, default_value_t = 10_000_000)]
    pub events: u64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

#[derive(Debug, Serialize)]
pub struct GeneratedShop {
    pub domain: String,
    pub timezone: String,
    pub api_key: String,
    pub videos: usize,
    pub widgets: usize,
}

/// One shop's catalog as its events name it.
struct ShopCatalog {
    domain: String,
    /// Each video's id and the id of the widget that shows it ("" when none does), the most
    /// watched first.
    videos: Vec<(String, String)>,
}

const TIMEZONES: [&str; 4] = ["America/New_York", "UTC", "Asia/Kathmandu", "Europe/Berlin"];
const INSERT_ROWS: usize = 200_000;
/// The catalog's limit of videos in one widget.
const WIDGET_VIDEOS: usize = 200;

pub async fn run(
    pool: &sqlx::PgPool,
    warehouse: &Warehouse,
    plan: &Plan,
) -> anyhow::Result<Vec<GeneratedShop>> {
    let mut rng = StdRng::seed_from_u64(plan.seed);
    let run = Uuid::now_v7().simple().to_string()[..8].to_string();
    let started = Instant::now();
    let mut shops_out = Vec::new();
    let mut catalog: Vec<ShopCatalog> = Vec::new();
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
        let shown_in = create_widgets(pool, &domain, &ids, plan.widgets).await?;
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
            widgets: plan.widgets,
        });
        let videos = ids.iter().map(Uuid::to_string).zip(shown_in).collect();
        catalog.push(ShopCatalog {
            domain: domain.to_string(),
            videos,
        });
    }
    eprintln!(
        "catalog: {} shops, {} videos, {} widgets in {:.1} s",
        plan.shops,
        plan.videos,
        plan.shops * plan.widgets,
        started.elapsed().as_secs_f64()
    );

    let today = Utc::now().date_naive();
    let first_day = today - Days::new(plan.days.saturating_sub(1));
    let (events, days) = (plan.events, plan.days);
    // One thread makes the events (in seed order) while this task sends the previous batch.
    // They come in time order, as a store's do: event i falls on day i·days/events, so each
    // batch holds a day or two and ClickHouse's parts, like a live store's, hold consecutive
    // days. (Drawn at random instead, every batch held every day, and even after the merges
    // settled each month was read as 2–3 rows per video where a live store reads about one.)
    let (batches, mut received) = tokio::sync::mpsc::channel::<Vec<SpoolEvent>>(2);
    let producer = tokio::task::spawn_blocking(move || {
        let day_of = |i: u64| {
            let day = u128::from(i) * u128::from(days) / u128::from(events.max(1));
            first_day + Days::new(day as u64)
        };
        let mut sent = 0;
        while sent < events {
            let rows = (events - sent).min(INSERT_ROWS as u64);
            let batch = (sent..sent + rows).map(|i| random_event(&mut rng, &catalog, day_of(i)));
            if batches.blocking_send(batch.collect()).is_err() {
                return;
            }
            sent += rows;
        }
    });
    let started = Instant::now();
    let mut written = 0u64;
    let batch_id = Uuid::now_v7();
    while let Some(events) = received.recv().await {
        let mut insert = warehouse.insert_events()?;
        for event in &events {
            insert.write(&EventRow::new(batch_id, event)).await?;
        }
        insert.end().await.context("insert events")?;
        written += events.len() as u64;
        eprintln!(
            "{written} / {} events ({:.0}/s)",
            plan.events,
            written as f64 / started.elapsed().as_secs_f64()
        );
    }
    producer.await.context("event generator")?;
    Ok(shops_out)
}

/// `count` active widgets of mixed types; widget w shows videos w, w + count, w + 2·count, … (at
/// most [`WIDGET_VIDEOS`]). Returns, for each video, the id of the widget that shows it or "".
async fn create_widgets(
    pool: &sqlx::PgPool,
    domain: &ShopDomain,
    videos: &[Uuid],
    count: usize,
) -> anyhow::Result<Vec<String>> {
    let mut shown_in = vec![String::new(); videos.len()];
    for w in 0..count {
        let shown: Vec<usize> = (w..videos.len())
            .step_by(count)
            .take(WIDGET_VIDEOS)
            .collect();
        let widget = NewWidget {
            widget_type: WidgetType::ALL[w % WidgetType::ALL.len()],
            title: text_line(format!("Widget {w:02}"))?,
            status: WidgetStatus::Active,
            priority: 0,
            view_style: ViewStyle::default(),
            click_behavior: ClickBehavior::default(),
            modal_layout: ModalLayout::default(),
            source_type: SourceType::Manual,
            video_ids: shown.iter().map(|&v| videos[v]).collect(),
            rules: DisplayRules::default(),
        };
        let id = widgets::create(pool, domain, widget)
            .await
            .context("create widget")?
            .id
            .to_string();
        for v in shown {
            shown_in[v].clone_from(&id);
        }
    }
    Ok(shown_in)
}

fn text_line(raw: String) -> anyhow::Result<TextLine> {
    TextLine::parse(&raw).with_context(|| format!("generated text {raw:?}"))
}

fn random_event(rng: &mut StdRng, catalog: &[ShopCatalog], local_date: NaiveDate) -> SpoolEvent {
    let shop = &catalog[rng.gen_range(0..catalog.len())];
    // A few videos get most of the traffic, as on real stores.
    let skewed = (rng.gen::<f64>().powi(3) * shop.videos.len() as f64) as usize;
    let (video, shown_in) = &shop.videos[skewed.min(shop.videos.len() - 1)];
    // Most plays are in a widget; the rest on the video's own embed.
    let widget = if rng.gen_range(0..10) < 9 {
        shown_in.clone()
    } else {
        String::new()
    };
    let roll: u32 = rng.gen_range(0..100);
    let event_type = match roll {
        0..=56 => EventType::Impression,
        57..=80 => EventType::View,
        81..=88 => EventType::Click,
        89..=92 => EventType::Watch,
        93..=96 => EventType::AddToCart,
        _ => EventType::CheckoutCompleted,
    };
    let attribution = match event_type {
        EventType::AddToCart | EventType::CheckoutCompleted => match rng.gen_range(0..10) {
            0..=3 => Some(Attribution::Direct),
            4..=6 => Some(Attribution::Influenced),
            _ => None,
        },
        _ => None,
    };
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
    let placement = placement_of(&widget);
    SpoolEvent {
        event_id: uuid::Builder::from_random_bytes(rng.gen()).into_uuid(),
        client_event_id: false,
        shop: shop.domain.clone(),
        local_date,
        event_time: seconds,
        received_at: seconds,
        timestamp_replaced: false,
        event_type,
        attribution,
        video_id: video.clone(),
        widget_id: widget,
        session_id: format!("s{}", rng.gen_range(0..1_000_000)),
        customer_id: String::new(),
        product_id: String::new(),
        order_id: String::new(),
        revenue_e4,
        currency: "USD".into(),
        product_ids: Vec::new(),
        placement: Some(placement),
        device: Some(pick(
            rng,
            &[
                (70, Device::Mobile),
                (25, Device::Desktop),
                (5, Device::Tablet),
            ],
        )),
        country: Country::parse(country(rng)),
        source: Some(pick(rng, SOURCES)),
        watched_ms: if event_type == EventType::Watch {
            rng.gen_range(0..60_000)
        } else {
            0
        },
        // Most openings stop early; a fifth are watched to the end.
        max_percent: match event_type {
            EventType::Watch if rng.gen_range(0..5) == 0 => 100,
            EventType::Watch => (rng.gen::<f64>().powi(2) * 100.0) as u8,
            _ => 0,
        },
        group: None,
    }
}

/// Traffic sources in the shares a store's visits come in.
const SOURCES: &[(u32, Source)] = &[
    (40, Source::Direct),
    (25, Source::Search),
    (15, Source::Social),
    (10, Source::Email),
    (7, Source::Paid),
    (3, Source::Referral),
];

/// One of `choices`, each as likely as its weight.
fn pick<T: Copy>(rng: &mut StdRng, choices: &[(u32, T)]) -> T {
    let mut roll = rng.gen_range(0..choices.iter().map(|c| c.0).sum::<u32>());
    for &(weight, choice) in choices {
        if roll < weight {
            return choice;
        }
        roll -= weight;
    }
    choices[choices.len() - 1].1
}

/// A storefront country: most of a store's visits from its own, the rest from a long tail.
fn country(rng: &mut StdRng) -> &'static str {
    const TAIL: [&str; 20] = [
        "NL", "SE", "NO", "DK", "IE", "NZ", "ES", "IT", "BE", "CH", "AT", "PL", "PT", "JP", "SG",
        "MX", "BR", "IN", "ZA", "AE",
    ];
    match rng.gen_range(0..100) {
        0..=69 => "US",
        70..=77 => "CA",
        78..=83 => "GB",
        84..=87 => "AU",
        88..=90 => "DE",
        91..=93 => "FR",
        _ => TAIL[rng.gen_range(0..TAIL.len())],
    }
}

/// The type of page a widget is placed on (a video's own embed, without a widget, is on its
/// product's page): fixed per widget, as a merchant places it once.
fn placement_of(widget: &str) -> Placement {
    let hash = widget
        .bytes()
        .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
    match (widget.is_empty(), hash % 20) {
        (true, _) => Placement::Product,
        (_, 0..=7) => Placement::Home,
        (_, 8..=15) => Placement::Product,
        (_, 16..=18) => Placement::Collection,
        _ => Placement::Cart,
    }
}
