//! Analytics against a recount: generated events, generated queries, and what the events sent
//! make of each answer.

use super::*;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::LazyLock;
use std::time::Duration;

use chrono::{DateTime, Days, Months, NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;
use futures::StreamExt;
use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use videoapp::config::Settings;

use super::truth_series::check_series;

/// Half-hour and three-quarter-hour offsets, a day ahead of UTC and half a day behind, and two
/// changes of daylight saving time inside the window: Chatham's start (2026-09-27) and St. John's
/// end (2026-11-01).
pub const TIMEZONES: [&str; 4] = [
    "America/St_Johns",
    "Asia/Kathmandu",
    "Pacific/Chatham",
    "Pacific/Marquesas",
];
pub const KINDS: [&str; 6] = [
    "impression",
    "view",
    "click",
    "add_to_cart",
    "checkout_completed",
    "watch",
];
pub const CHECKOUT: usize = 4;
pub const WATCH: usize = 5;
pub const VIDEOS: usize = 3;
pub const WIDGETS: usize = 2;

/// The catalog duration of video `v`, in seconds: the first has none (0), so its watches are not
/// capped.
pub fn duration(v: usize) -> f64 {
    7.5 * v as f64
}

/// What a watch of video `v` counts for `watched_ms` played: at most three times the video's
/// duration, rounded up to the millisecond, when it has one.
pub fn capped(v: usize, watched_ms: u32) -> u64 {
    let cap = (duration(v) * 3_000.0).ceil() as u64;
    match cap {
        0 => watched_ms.into(),
        cap => cap.min(watched_ms.into()),
    }
}

/// An event's `attributionType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attribution {
    Direct,
    Influenced,
}

/// The four dimensions an event is counted under, in the contract's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dimension {
    Placement,
    Device,
    Country,
    Source,
}

pub const DIMENSIONS: [Dimension; 4] = [
    Dimension::Placement,
    Dimension::Device,
    Dimension::Country,
    Dimension::Source,
];

pub const PLACEMENTS: [&str; 6] = ["home", "product", "collection", "page", "cart", "other"];
pub const DEVICES: [&str; 3] = ["mobile", "tablet", "desktop"];
/// A few codes, the platform's additions among them: enough values to sort, few enough that
/// each has events.
pub const COUNTRIES: [&str; 7] = ["US", "NZ", "NP", "CA", "XK", "TA", "ZZ"];
pub const SOURCES: [&str; 6] = ["direct", "search", "social", "email", "paid", "referral"];

impl Dimension {
    pub fn as_str(self) -> &'static str {
        match self {
            Dimension::Placement => "placement",
            Dimension::Device => "device",
            Dimension::Country => "country",
            Dimension::Source => "source",
        }
    }

    /// Every value a query may name: those an event may say, and `unknown` for none.
    pub fn values(self) -> Vec<&'static str> {
        let said: &[&'static str] = match self {
            Dimension::Placement => &PLACEMENTS,
            Dimension::Device => &DEVICES,
            Dimension::Country => &COUNTRIES,
            Dimension::Source => &SOURCES,
        };
        said.iter().copied().chain(["unknown"]).collect()
    }
}

/// A request's `User-Agent` and `Sec-CH-UA-Mobile` headers (each possibly absent), and the device
/// the service reads from them.
pub struct Agent {
    pub user_agent: Option<&'static str>,
    pub mobile_hint: Option<&'static str>,
    pub device: Option<&'static str>,
}

const IPHONE: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 \
    (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1";
const ANDROID_PHONE: &str = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 \
    (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36";
const IPAD: &str = "Mozilla/5.0 (iPad; CPU OS 16_0 like Mac OS X) AppleWebKit/605.1.15 \
    (KHTML, like Gecko) Version/16.0 Mobile/15E148 Safari/604.1";
const ANDROID_TABLET: &str = "Mozilla/5.0 (Linux; Android 13; SM-X200) AppleWebKit/537.36 \
    (KHTML, like Gecko) Chrome/120.0 Safari/537.36";
const WINDOWS: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 \
    (KHTML, like Gecko) Chrome/120.0 Safari/537.36";
const MAC: &str = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 \
    (KHTML, like Gecko) Version/17.0 Safari/605.1.15";

/// Phones, tablets and desktops as browsers name themselves, a desktop browser that says it is
/// on a phone by the client hint, and requests that name nothing.
pub const AGENTS: [Agent; 9] = [
    Agent {
        user_agent: Some(IPHONE),
        mobile_hint: None,
        device: Some("mobile"),
    },
    Agent {
        user_agent: Some(ANDROID_PHONE),
        mobile_hint: Some("?1"),
        device: Some("mobile"),
    },
    Agent {
        user_agent: Some(WINDOWS),
        mobile_hint: Some("?1"),
        device: Some("mobile"),
    },
    Agent {
        user_agent: Some(IPAD),
        mobile_hint: Some("?0"),
        device: Some("tablet"),
    },
    Agent {
        user_agent: Some(ANDROID_TABLET),
        mobile_hint: None,
        device: Some("tablet"),
    },
    Agent {
        user_agent: Some(WINDOWS),
        mobile_hint: Some("?0"),
        device: Some("desktop"),
    },
    Agent {
        user_agent: Some(MAC),
        mobile_hint: None,
        device: Some("desktop"),
    },
    Agent {
        user_agent: None,
        mobile_hint: None,
        device: None,
    },
    Agent {
        user_agent: None,
        mobile_hint: Some("?0"),
        device: None,
    },
];

/// Where, on what and from where an event happened: indices into [`PLACEMENTS`], [`AGENTS`],
/// [`COUNTRIES`] and [`SOURCES`] (none: the event did not say).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Context {
    pub placement: Option<usize>,
    pub agent: usize,
    pub country: Option<usize>,
    pub source: Option<usize>,
}

impl Context {
    /// The value the event is counted under in `dimension`, `unknown` when it did not say.
    pub fn value(&self, dimension: Dimension) -> &'static str {
        let said = match dimension {
            Dimension::Placement => self.placement.map(|i| PLACEMENTS[i]),
            Dimension::Device => AGENTS[self.agent].device,
            Dimension::Country => self.country.map(|i| COUNTRIES[i]),
            Dimension::Source => self.source.map(|i| SOURCES[i]),
        };
        said.unwrap_or("unknown")
    }
}

/// What a `watch` says: milliseconds played (before the cap) and the furthest percent reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watch {
    pub watched_ms: u32,
    pub max_percent: u8,
}

#[derive(Debug, Clone)]
pub struct GeneratedEvent {
    pub shop: usize,
    /// Index into the shop's videos, or none (a watch always names one).
    pub video: Option<usize>,
    pub widget: Option<usize>,
    pub kind: usize,
    pub attribution: Option<Attribution>,
    pub at: DateTime<Utc>,
    /// Ten-thousandths, for checkouts: sums round to cents.
    pub revenue_e4: i64,
    /// For watches.
    pub watch: Option<Watch>,
    pub context: Context,
}

/// Ten weeks from late August: whole months for the monthly view, partial ones for the daily
/// view, and two changes of daylight saving time inside (see [`TIMEZONES`]).
pub fn window_start() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 8, 24).unwrap()
}
pub const WINDOW_DAYS: u64 = 70;

/// The first instant of `date` in UTC.
pub fn utc_midnight(date: NaiveDate) -> DateTime<Utc> {
    Utc.from_utc_datetime(&date.and_hms_opt(0, 0, 0).unwrap())
}

/// Where, on what and from where: each said four times in five.
fn contexts() -> impl Strategy<Value = Context> {
    let said = |n: usize| proptest::option::weighted(0.8, 0..n);
    (
        said(PLACEMENTS.len()),
        0..AGENTS.len(),
        said(COUNTRIES.len()),
        said(SOURCES.len()),
    )
        .prop_map(|(placement, agent, country, source)| Context {
            placement,
            agent,
            country,
            source,
        })
}

/// What a watch says: up to a minute played, so the cap of each video with a duration (22.5 s,
/// 45 s) is met and passed; how far, often exactly at or just short of each point counted.
fn watches() -> impl Strategy<Value = Watch> {
    let points = [0u8, 24, 25, 49, 50, 74, 75, 94, 95, 99, 100];
    let played = prop_oneof![
        4 => 0..60_000u32,
        1 => prop::sample::select(vec![0u32, 22_499, 22_500, 22_501, 45_000, 45_001]),
    ];
    let percent = prop_oneof![2 => 0..=100u8, 1 => prop::sample::select(points.to_vec())];
    (played, percent).prop_map(|(watched_ms, max_percent)| Watch {
        watched_ms,
        max_percent,
    })
}

/// `count` events spread evenly over `seasons`, each `[from, to)` in UTC days.
pub fn events(
    seasons: Vec<(NaiveDate, NaiveDate)>,
    count: Range<usize>,
) -> impl Strategy<Value = Vec<GeneratedEvent>> {
    let seasons: Vec<(DateTime<Utc>, i64)> = seasons
        .iter()
        .map(|&(from, to)| (utc_midnight(from), (to - from).num_seconds()))
        .collect();
    let total: i64 = seasons.iter().map(|(_, length)| length).sum();
    let attribution = prop_oneof![Just(Attribution::Direct), Just(Attribution::Influenced)];
    let event = (
        (0..TIMEZONES.len(), 0..KINDS.len()),
        (proptest::option::of(0..VIDEOS), 0..VIDEOS),
        proptest::option::of(0..WIDGETS),
        proptest::option::of(attribution),
        0..total,
        0..10_000_000i64,
        watches(),
        contexts(),
    )
        .prop_map(
            move |(
                (shop, kind),
                (video, watched),
                widget,
                attribution,
                mut second,
                revenue_e4,
                watch,
                context,
            )| {
                let (start, _) = seasons
                    .iter()
                    .find(|(_, length)| {
                        let inside = second < *length;
                        if !inside {
                            second -= length;
                        }
                        inside
                    })
                    .unwrap();
                let is_watch = kind == WATCH;
                GeneratedEvent {
                    shop,
                    // A watch is of a video.
                    video: if is_watch {
                        video.or(Some(watched))
                    } else {
                        video
                    },
                    widget,
                    kind,
                    attribution,
                    at: *start + chrono::Duration::seconds(second),
                    revenue_e4,
                    watch: is_watch.then_some(watch),
                    context,
                }
            },
        );
    proptest::collection::vec(event, count)
}

/// What `compare=` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compare {
    PreviousPeriod,
    PreviousYear,
}

pub const COMPARES: [Option<Compare>; 3] = [
    None,
    Some(Compare::PreviousPeriod),
    Some(Compare::PreviousYear),
];

impl Compare {
    pub fn as_str(self) -> &'static str {
        match self {
            Compare::PreviousPeriod => "previous_period",
            Compare::PreviousYear => "previous_year",
        }
    }
}

/// The metrics a breakdown's entries may be sorted by.
pub const BREAKDOWN_SORTS: [&str; 6] = [
    "impressions",
    "views",
    "clicks",
    "add_to_cart",
    "orders",
    "revenue",
];

/// One question asked of every endpoint: a range of local days, a comparison, a list order, the
/// events it is about, and how to break the answers down.
#[derive(Debug, Clone)]
pub struct Query {
    pub first: NaiveDate,
    pub last: NaiveDate,
    pub compare: Option<Compare>,
    pub sort_by: &'static str,
    pub ascending: bool,
    /// Each dimension at most once; `unknown` selects the events that did not say.
    pub filters: Vec<(Dimension, &'static str)>,
    /// For the summary, one video, one widget and the time series (the lists have none).
    pub breakdown: Option<Dimension>,
    /// The entries' order: a metric and whether ascending; none asks for the default (views,
    /// descending) by saying nothing.
    pub breakdown_order: Option<(&'static str, bool)>,
}

impl Query {
    /// A range and its comparison, about every event, nothing broken down.
    pub fn new(first: NaiveDate, last: NaiveDate, compare: Option<Compare>) -> Query {
        Query {
            first,
            last,
            compare,
            sort_by: "revenue",
            ascending: false,
            filters: vec![],
            breakdown: None,
            breakdown_order: None,
        }
    }

    /// The range, the comparison and the filters as query parameters.
    pub fn params(&self) -> String {
        let mut params = format!("start_date={}&end_date={}", self.first, self.last);
        if let Some(compare) = self.compare {
            params.push_str(&format!("&compare={}", compare.as_str()));
        }
        for (dimension, value) in &self.filters {
            params.push_str(&format!("&{}={value}", dimension.as_str()));
        }
        params
    }

    /// [`Query::params`], and the breakdown with its order when there is one.
    pub fn broken_down(&self) -> String {
        let mut params = self.params();
        if let Some(dimension) = self.breakdown {
            params.push_str(&format!("&breakdown={}", dimension.as_str()));
            if let Some((sort_by, ascending)) = self.breakdown_order {
                let order = if ascending { "asc" } else { "desc" };
                params.push_str(&format!("&sort_by={sort_by}&sort_order={order}"));
            }
        }
        params
    }

    /// `whose` events that the filters keep.
    pub fn scope(&self, whose: Whose) -> Scope {
        Scope {
            whose,
            filters: self.filters.clone(),
        }
    }

    /// Where `day` of the range falls in the comparison range, as the contract defines it.
    pub fn shift(&self, day: NaiveDate) -> Option<NaiveDate> {
        let days = (self.last - self.first).num_days() as u64 + 1;
        self.compare.map(|compare| match compare {
            Compare::PreviousPeriod => day - Days::new(days),
            Compare::PreviousYear => day.checked_sub_months(Months::new(12)).unwrap(),
        })
    }

    /// The comparison range, when there is one.
    pub fn comparison(&self) -> Option<(NaiveDate, NaiveDate)> {
        Some((self.shift(self.first)?, self.shift(self.last)?))
    }
}

/// A set of filters: 0 to 2 dimensions, each with one of its values (`unknown` among them).
fn filters() -> impl Strategy<Value = Vec<(Dimension, &'static str)>> {
    let one = (0..DIMENSIONS.len(), any::<prop::sample::Index>());
    proptest::collection::vec(one, 0..=2).prop_map(|drawn| {
        let mut filters: Vec<(Dimension, &'static str)> = vec![];
        for (d, value) in drawn {
            let dimension = DIMENSIONS[d];
            if filters.iter().all(|(other, _)| *other != dimension) {
                filters.push((dimension, *value.get(&dimension.values())));
            }
        }
        filters
    })
}

/// A breakdown (or none, one time in five) and its order (the default one time in three).
fn breakdowns() -> impl Strategy<Value = (Option<Dimension>, Option<(&'static str, bool)>)> {
    let dimension = proptest::option::weighted(0.8, prop::sample::select(DIMENSIONS.to_vec()));
    let sort = prop::sample::select(BREAKDOWN_SORTS.to_vec());
    (
        dimension,
        proptest::option::weighted(0.67, (sort, any::<bool>())),
    )
}

/// Ranges over the window (a day either side too): one for each comparison, and one that spans
/// the window compared at random; each list sorted at random; each about the events of random
/// filters, broken down at random.
pub fn queries() -> impl Strategy<Value = Vec<Query>> {
    let day = 0..WINDOW_DAYS + 2;
    let query = (
        (day.clone(), day),
        0..SORT_KEYS.len(),
        any::<bool>(),
        0..COMPARES.len(),
        filters(),
        breakdowns(),
    );
    proptest::collection::vec(query, COMPARES.len() + 1).prop_map(|drawn| {
        let day_zero = window_start() - Days::new(1);
        drawn
            .into_iter()
            .enumerate()
            .map(
                |(i, ((a, b), sort, ascending, compare, filters, (breakdown, order)))| {
                    let (a, b, compare) = match COMPARES.get(i) {
                        Some(compare) => (a.min(b), a.max(b), *compare),
                        None => (0, WINDOW_DAYS + 1, COMPARES[compare]),
                    };
                    Query {
                        first: day_zero + Days::new(a),
                        last: day_zero + Days::new(b),
                        compare,
                        sort_by: SORT_KEYS[sort],
                        ascending,
                        filters,
                        breakdown,
                        breakdown_order: order,
                    }
                },
            )
            .collect()
    })
}

/// The part of the add-to-carts and orders one attribution accounts for.
#[derive(Default, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    add_to_cart: u64,
    orders: u64,
    revenue_e4: i64,
}

#[derive(Default, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    impressions: u64,
    views: u64,
    clicks: u64,
    add_to_cart: u64,
    orders: u64,
    revenue_e4: i64,
    direct: Split,
    influenced: Split,
    watched_ms: u64,
    /// Watches that reached 25, 50, 75, 95 and 100 percent.
    reached: [u64; 5],
}

/// Ten-thousandths as the API writes money: cents, rounded half away from zero.
pub fn money(e4: i64) -> String {
    let cents = (e4.abs() + 50) / 100;
    let sign = if e4 < 0 { "-" } else { "" };
    format!("{sign}{}.{:02}", cents / 100, cents % 100)
}

/// `part / whole × 100` with two decimals (half up), 0 without a whole, as a JSON number.
pub fn rate(part: u64, whole: u64) -> Value {
    hundredths(part * 10_000, whole)
}

/// Seconds from milliseconds, per `count` openings (1 for a sum), two decimals (half up), 0
/// without openings, as a JSON number.
pub fn seconds(ms: u64, count: u64) -> Value {
    hundredths(ms, 10 * count)
}

/// `part / whole` hundredths with two decimals (half up), 0 without a whole, as a JSON number.
fn hundredths(part: u64, whole: u64) -> Value {
    let hundredths = match whole {
        0 => 0,
        _ => (2 * part + whole) / (2 * whole),
    };
    serde_json::from_str(&format!("{}.{:02}", hundredths / 100, hundredths % 100)).unwrap()
}

impl Split {
    pub fn json(&self) -> Value {
        json!({
            "add_to_cart": self.add_to_cart,
            "orders": self.orders,
            "revenue": money(self.revenue_e4),
        })
    }
}

impl Counts {
    pub fn add(&mut self, e: &GeneratedEvent) {
        let split = match e.attribution {
            Some(Attribution::Direct) => Some(&mut self.direct),
            Some(Attribution::Influenced) => Some(&mut self.influenced),
            None => None,
        };
        match KINDS[e.kind] {
            "impression" => self.impressions += 1,
            "view" => self.views += 1,
            "click" => self.clicks += 1,
            "add_to_cart" => {
                self.add_to_cart += 1;
                split.into_iter().for_each(|s| s.add_to_cart += 1);
            }
            "watch" => {
                let (video, watch) = (e.video.unwrap(), e.watch.unwrap());
                self.watched_ms += capped(video, watch.watched_ms);
                for (reached, point) in self.reached.iter_mut().zip([25, 50, 75, 95, 100]) {
                    *reached += u64::from(watch.max_percent >= point);
                }
            }
            _ => {
                self.orders += 1;
                self.revenue_e4 += e.revenue_e4;
                split.into_iter().for_each(|s| {
                    s.orders += 1;
                    s.revenue_e4 += e.revenue_e4;
                });
            }
        }
    }

    /// The `metrics` object the API reports for these counts (revenues as their text).
    pub fn metrics(&self) -> Value {
        json!({
            "impressions": self.impressions,
            "views": self.views,
            "clicks": self.clicks,
            "add_to_cart": self.add_to_cart,
            "orders": self.orders,
            "revenue": money(self.revenue_e4),
            "attribution": {
                "direct": self.direct.json(),
                "influenced": self.influenced.json(),
            },
            "watch_time_seconds": seconds(self.watched_ms, 1),
            "avg_watch_seconds": seconds(self.watched_ms, self.clicks),
            "completion_rate": rate(self.reached[3], self.clicks),
            "reached": {
                "p25": self.reached[0],
                "p50": self.reached[1],
                "p75": self.reached[2],
                "p100": self.reached[4],
            },
        })
    }

    /// The number a breakdown is sorted by, `metric` being one of [`BREAKDOWN_SORTS`].
    pub fn sort_key(&self, metric: &str) -> i64 {
        match metric {
            "impressions" => self.impressions as i64,
            "views" => self.views as i64,
            "clicks" => self.clicks as i64,
            "add_to_cart" => self.add_to_cart as i64,
            "orders" => self.orders as i64,
            "revenue" => self.revenue_e4,
            _ => panic!("no breakdown is sorted by {metric}"),
        }
    }

    /// The summary's `data`: the metrics with the rates.
    pub fn summary(&self) -> Value {
        let mut summary = self.metrics();
        summary["ctr"] = rate(self.clicks, self.impressions);
        summary["cvr"] = rate(self.orders, self.views);
        summary
    }
}

/// Whose events a number counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whose {
    Shop,
    Video(usize),
    Widget(usize),
}

impl Whose {
    pub fn keeps(self, e: &GeneratedEvent) -> bool {
        match self {
            Whose::Shop => true,
            Whose::Video(v) => e.video == Some(v),
            Whose::Widget(w) => e.widget == Some(w),
        }
    }
}

/// The events a number counts: whose, and what the filters (or a breakdown's entry) keep.
#[derive(Debug, Clone)]
pub struct Scope {
    pub whose: Whose,
    pub filters: Vec<(Dimension, &'static str)>,
}

impl Scope {
    pub fn keeps(&self, e: &GeneratedEvent) -> bool {
        let filters = self.filters.iter();
        self.whose.keeps(e)
            && filters
                .clone()
                .all(|(d, value)| e.context.value(*d) == *value)
    }

    /// These events that say `value` in `dimension`: a breakdown's entry.
    pub fn and(&self, dimension: Dimension, value: &'static str) -> Scope {
        let mut narrower = self.clone();
        narrower.filters.push((dimension, value));
        narrower
    }
}

/// One shop's events with their local dates: what every expectation is recounted from.
pub struct Ledger<'a> {
    dated: Vec<(NaiveDate, &'a GeneratedEvent)>,
}

impl<'a> Ledger<'a> {
    pub fn new(events: &'a [GeneratedEvent], shop: usize, tz: Tz) -> Ledger<'a> {
        let dated = events
            .iter()
            .filter(|e| e.shop == shop)
            .map(|e| (e.at.with_timezone(&tz).date_naive(), e))
            .collect();
        Ledger { dated }
    }

    /// The scope's events, with the local date of each.
    pub fn of<'s>(
        &'s self,
        scope: &'s Scope,
    ) -> impl Iterator<Item = (NaiveDate, &'a GeneratedEvent)> + 's {
        self.dated
            .iter()
            .filter(move |(_, e)| scope.keeps(e))
            .copied()
    }

    pub fn count(&self, scope: &Scope, (first, last): (NaiveDate, NaiveDate)) -> Counts {
        let mut counts = Counts::default();
        self.of(scope)
            .filter(|(date, _)| (first..=last).contains(date))
            .for_each(|(_, e)| counts.add(e));
        counts
    }

    /// A record's numbers over the query's range, and its comparison's when asked for.
    pub fn reported(&self, scope: &Scope, q: &Query) -> (Counts, Option<Counts>) {
        let current = self.count(scope, (q.first, q.last));
        (
            current,
            q.comparison().map(|range| self.count(scope, range)),
        )
    }

    /// A breakdown of the scope by `dimension`: each value its events in the query's range say
    /// (or in its comparison's: a value gone since shows as zeros beside its earlier numbers),
    /// with its part of the scope, in the order the query asks (by the range's numbers, views
    /// descending by default; ties by value).
    pub fn breakdown(
        &self,
        scope: &Scope,
        q: &Query,
        dimension: Dimension,
    ) -> Vec<(&'static str, Scope)> {
        let ranges: Vec<(NaiveDate, NaiveDate)> = std::iter::once((q.first, q.last))
            .chain(q.comparison())
            .collect();
        let values: BTreeSet<&'static str> = self
            .of(scope)
            .filter(|(date, _)| ranges.iter().any(|(a, b)| (a..=b).contains(&date)))
            .map(|(_, e)| e.context.value(dimension))
            .collect();
        let (sort_by, ascending) = q.breakdown_order.unwrap_or(("views", false));
        let mut entries: Vec<(i64, &'static str, Scope)> = values
            .into_iter()
            .map(|value| {
                let part = scope.and(dimension, value);
                let key = self.count(&part, (q.first, q.last)).sort_key(sort_by);
                (if ascending { key } else { -key }, value, part)
            })
            .collect();
        entries.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        entries
            .into_iter()
            .map(|(_, value, part)| (value, part))
            .collect()
    }

    /// A record's `data` broken down by `dimension`: an entry per value with its numbers (the
    /// summary's with its rates).
    pub fn broken_down(
        &self,
        scope: &Scope,
        q: &Query,
        dimension: Dimension,
        rates: bool,
    ) -> Value {
        let entries = self
            .breakdown(scope, q, dimension)
            .into_iter()
            .map(|(value, part)| {
                let numbers = |c: Counts| if rates { c.summary() } else { c.metrics() };
                let (current, comparison) = self.reported(&part, q);
                let mut entry = json!({ dimension.as_str(): value, "metrics": numbers(current) });
                if let Some(comparison) = comparison {
                    entry["comparison"] = json!({ "metrics": numbers(comparison) });
                }
                entry
            });
        Value::Array(entries.collect())
    }
}

pub struct World {
    shops: Vec<String>,
    timezones: Vec<Tz>,
    keys: Vec<String>,
    videos: Vec<Vec<String>>,
    widgets: Vec<Vec<String>>,
}

pub async fn build_world(app: &TestApp, case: usize) -> World {
    let mut world = World {
        shops: vec![],
        timezones: vec![],
        keys: vec![],
        videos: vec![],
        widgets: vec![],
    };
    for (i, tz) in TIMEZONES.iter().enumerate() {
        let shop = format!("truth-{case}-{i}.myshopify.com");
        app.send_admin_json(
            Method::PUT,
            &format!("/shops/{shop}"),
            &json!({ "timezone": tz }),
        )
        .await;
        let mut videos = vec![];
        for v in 0..VIDEOS {
            // Commas and quotes, for the CSV's quoting.
            let title = format!("video {v}, \"take {v}\"");
            let video = json!({ "title": title, "duration": duration(v) });
            videos.push(app.create_video(&shop, video).await);
        }
        let mut widgets = vec![];
        for (w, status) in ["active", "draft"].iter().enumerate().take(WIDGETS) {
            let widget = json!({ "title": format!("widget {w}, \"b\""), "status": status, "videoIds": videos });
            widgets.push(app.create_widget(&shop, widget).await);
        }
        let key = app.create_api_key(&shop, "truth").await;
        world.keys.push(key["key"].as_str().unwrap().to_string());
        world.timezones.push(tz.parse().unwrap());
        world.shops.push(shop);
        world.videos.push(videos);
        world.widgets.push(widgets);
    }
    world
}

/// An event as the loader sends it.
fn wire(world: &World, e: &GeneratedEvent) -> Value {
    let shop = e.shop;
    let mut json = json!({ "eventType": KINDS[e.kind], "timestamp": e.at.to_rfc3339() });
    if let Some(v) = e.video {
        json["videoId"] = json!(world.videos[shop][v]);
    }
    if let Some(w) = e.widget {
        json["widgetId"] = json!(world.widgets[shop][w]);
    }
    if let Some(attribution) = e.attribution {
        json["attributionType"] = json!(match attribution {
            Attribution::Direct => "direct",
            Attribution::Influenced => "influenced",
        });
    }
    if e.kind == CHECKOUT {
        let (units, e4) = (e.revenue_e4 / 10_000, e.revenue_e4 % 10_000);
        json["revenue"] = json!(format!("{units}.{e4:04}"));
    }
    if let Some(watch) = e.watch {
        json["watchedMs"] = json!(watch.watched_ms);
        json["maxPercent"] = json!(watch.max_percent);
    }
    let context = e.context;
    if let Some(i) = context.placement {
        json["placement"] = json!(PLACEMENTS[i]);
    }
    if let Some(i) = context.country {
        json["country"] = json!(COUNTRIES[i]);
    }
    if let Some(i) = context.source {
        json["source"] = json!(SOURCES[i]);
    }
    json
}

/// Sends every event through the ingest endpoint, each batch from the browser its events name,
/// and waits until ClickHouse holds them all.
pub async fn send(app: &TestApp, world: &World, events: &[GeneratedEvent]) {
    for shop in 0..world.shops.len() {
        for (a, agent) in AGENTS.iter().enumerate() {
            let batch: Vec<Value> = events
                .iter()
                .filter(|e| e.shop == shop && e.context.agent == a)
                .map(|e| wire(world, e))
                .collect();
            let url = format!(
                "/apps/videoapp_sub/analytics?{}",
                signed(&world.shops[shop], &[])
            );
            for chunk in batch.chunks(100) {
                let mut request = app.client.post(app.url(&url));
                if let Some(user_agent) = agent.user_agent {
                    request = request.header("user-agent", user_agent);
                }
                if let Some(hint) = agent.mobile_hint {
                    request = request.header("sec-ch-ua-mobile", hint);
                }
                let response = request
                    .json(&json!({ "events": chunk }))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(response.status(), StatusCode::ACCEPTED);
            }
        }
    }
    let expected = events.len() as u64;
    let shops = world
        .shops
        .iter()
        .map(|s| format!("'{s}'"))
        .collect::<Vec<_>>()
        .join(",");
    // Once the spool is empty every acknowledged event is in, views included, and no more come.
    wait_until_shipped(app, Duration::from_secs(60)).await;
    let n: u64 = clickhouse_query(
        &app.clickhouse_database,
        &format!("SELECT count() FROM events WHERE shop_domain IN ({shops})"),
    )
    .await
    .parse()
    .unwrap();
    assert_eq!(n, expected, "events in ClickHouse");
    // Each kept as sent: none had its timestamp replaced by the receive time.
    let replaced = clickhouse_query(
        &app.clickhouse_database,
        &format!(
            "SELECT count() FROM events WHERE shop_domain IN ({shops}) AND timestamp_replaced = 1"
        ),
    )
    .await;
    assert_eq!(replaced, "0", "events outside the accepted window");
    // Each kept where, on what and from where it happened: the device as read from the request.
    for dimension in DIMENSIONS {
        let mut expected: BTreeMap<&str, u64> = BTreeMap::new();
        for e in events {
            let value = match e.context.value(dimension) {
                "unknown" => "",
                value => value,
            };
            *expected.entry(value).or_default() += 1;
        }
        let expected: String = expected
            .iter()
            .map(|(value, n)| format!("[{value}]\t{n}\n"))
            .collect();
        let stored = clickhouse_query(
            &app.clickhouse_database,
            &format!(
                "SELECT concat('[', toString({0}), ']'), count() FROM events WHERE shop_domain IN ({shops}) \
                 GROUP BY {0} ORDER BY toString({0})",
                dimension.as_str()
            ),
        )
        .await;
        assert_eq!(
            stored.trim_end(),
            expected.trim_end(),
            "{dimension:?} stored"
        );
    }
}

/// Every `"revenue":` number of a JSON text turned into a string of the same digits, so that
/// parsing keeps the two decimals as written (a float would make `12.30` into `12.3`).
pub fn revenues_as_text(text: &str) -> String {
    static REVENUE: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r#""revenue":(-?[0-9][0-9.eE+-]*)"#).unwrap());
    REVENUE.replace_all(text, r#""revenue":"$1""#).into_owned()
}

/// The answer to `GET path` with the shop's key, asserting a 200.
pub async fn answer(app: &TestApp, key: &str, path: &str) -> reqwest::Response {
    let response = app.client.get(app.url(path)).bearer_auth(key).send();
    let response = response.await.unwrap();
    if response.status() != StatusCode::OK {
        let status = response.status();
        panic!("{path}: {status} {}", response.text().await.unwrap());
    }
    response
}

/// The JSON answer to `GET path`, asserting a 200; revenues as their text.
pub async fn get(app: &TestApp, key: &str, path: &str) -> Value {
    let text = answer(app, key, path).await.text().await.unwrap();
    serde_json::from_str(&revenues_as_text(&text)).unwrap()
}

/// The CSV answer to `GET path` (which asks `format=csv`), as records with the header first;
/// asserts a 200 attachment named `file`, with CRLF line ends.
pub async fn get_csv(app: &TestApp, key: &str, path: &str, file: &str) -> Vec<csv::StringRecord> {
    let response = answer(app, key, path).await;
    let headers = response.headers();
    assert_eq!(headers["content-type"], "text/csv; charset=utf-8", "{path}");
    assert_eq!(
        headers["content-disposition"],
        format!("attachment; filename=\"{file}\""),
        "{path}"
    );
    let text = response.text().await.unwrap();
    // No field holds a line break, so every one is a row's end.
    assert!(text.ends_with("\r\n"), "{path}: {text}");
    assert!(!text.replace("\r\n", "").contains('\n'), "{path}: {text}");
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(text.as_bytes())
        .records()
        .map(Result::unwrap)
        .collect()
}

/// The metric columns, as the contract lists them.
pub const METRIC_COLUMNS: &str = "impressions,views,clicks,add_to_cart,orders,revenue,\
    direct_add_to_cart,direct_orders,direct_revenue,\
    influenced_add_to_cart,influenced_orders,influenced_revenue,\
    watch_time_seconds,avg_watch_seconds,completion_rate,reached_p25,reached_p50,reached_p75,reached_p100";

/// The JSON value a CSV column stands for in a record (a list item or a bucket).
pub fn cell<'a>(record: &'a Value, column: &str) -> &'a Value {
    let (record, column) = match column.strip_prefix("comparison_") {
        Some(column) => (&record["comparison"], column),
        None => (record, column),
    };
    let metrics = &record["metrics"];
    match column.split_once('_') {
        Some((a @ ("direct" | "influenced"), column)) => &metrics["attribution"][a][column],
        Some(("reached", point)) => &metrics["reached"][point],
        _ => metrics.get(column).unwrap_or(&record[column]),
    }
}

/// A CSV field says what the JSON value says: text as it is, integers as written, other numbers
/// as the same number.
pub fn same(json: &Value, field: &str) -> bool {
    match json {
        Value::String(text) => text == field,
        Value::Number(n) if n.is_u64() => n.to_string() == field,
        Value::Number(n) => field.parse::<f64>().ok() == n.as_f64(),
        _ => false,
    }
}

/// The CSV holds the contract's header (`leading` columns, the metrics, with `compared` the
/// comparison's) and then `records`, in order, field by field.
pub fn assert_csv_is(
    csv: &[csv::StringRecord],
    leading: &[&str],
    compared: bool,
    records: &[Value],
    what: &str,
) {
    let metrics = METRIC_COLUMNS.split(',');
    let mut header: Vec<String> = leading.iter().map(|c| c.to_string()).collect();
    header.extend(metrics.clone().map(String::from));
    if compared {
        header.extend(metrics.map(|c| format!("comparison_{c}")));
    }
    assert_eq!(csv[0], header, "{what}: header");
    assert_eq!(csv.len() - 1, records.len(), "{what}: rows");
    for (row, record) in csv[1..].iter().zip(records) {
        for (column, field) in header.iter().zip(row) {
            let json = cell(record, column);
            assert!(
                same(json, field),
                "{what}: {column} is {field:?} in the CSV, {json} in the JSON"
            );
        }
    }
}

/// `meta` for the query's range (and comparison), in the shop's timezone.
pub fn meta(tz: Tz, q: &Query) -> Value {
    let instants = |first: NaiveDate, last: NaiveDate| {
        let start_of = |day: NaiveDate| {
            let midnight = day.and_hms_opt(0, 0, 0).unwrap();
            let start = tz.from_local_datetime(&midnight).earliest().unwrap();
            start.with_timezone(&Utc)
        };
        let end = start_of(last + Days::new(1)) - chrono::Duration::milliseconds(1);
        let iso = |t: DateTime<Utc>| t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string();
        json!({ "start_date": iso(start_of(first)), "end_date": iso(end) })
    };
    let mut meta = instants(q.first, q.last);
    if let Some((first, last)) = q.comparison() {
        meta["comparison"] = instants(first, last);
    }
    meta
}

/// A record's numbers: its metrics, and its comparison's (present only with `compare`).
pub fn assert_reports(record: &Value, (current, comparison): (Counts, Option<Counts>), what: &str) {
    assert_eq!(record["metrics"], current.metrics(), "{what}: {record}");
    let comparison = comparison.map(|c| json!({ "metrics": c.metrics() }));
    assert_eq!(record.get("comparison"), comparison.as_ref(), "{what}");
}

/// What one shop is asked: its key, its catalog, its events.
pub struct Shop<'a> {
    pub app: &'a TestApp,
    pub index: usize,
    pub tz: Tz,
    pub key: &'a str,
    pub videos: &'a [String],
    pub widgets: &'a [String],
    pub ledger: Ledger<'a>,
}

/// A list endpoint: `videos` or `widgets`, its leading CSV columns and whose events each of its
/// records counts.
pub struct Listing {
    list: &'static str,
    one: &'static str,
    leading: &'static [&'static str],
    whose: fn(usize) -> Whose,
}

pub const VIDEO_LIST: Listing = Listing {
    list: "videos",
    one: "video",
    leading: &["id", "title", "status", "duration", "product_count"],
    whose: Whose::Video,
};

pub const WIDGET_LIST: Listing = Listing {
    list: "widgets",
    one: "widget",
    leading: &["id", "title", "type", "status", "video_count"],
    whose: Whose::Widget,
};

impl Shop<'_> {
    /// Every page of the list (two items a page), each item (`ids`) and the CSV of the list.
    pub async fn check_list(&self, listing: &Listing, ids: &[String], q: &Query) {
        let order = if q.ascending { "asc" } else { "desc" };
        let params = format!("{}&sort_by={}&sort_order={order}", q.params(), q.sort_by);
        let path = format!("/api/v1/analytics/{}?{params}", listing.list);
        let mut records = vec![];
        for page in 1.. {
            let answer = get(self.app, self.key, &format!("{path}&limit=2&page={page}")).await;
            assert_eq!(answer["meta"], meta(self.tz, q), "{path}");
            assert_eq!(answer["pagination"]["total_count"], ids.len());
            records.extend(answer["data"].as_array().unwrap().iter().cloned());
            if page >= answer["pagination"]["total_pages"].as_u64().unwrap() {
                break;
            }
        }
        assert_eq!(records.len(), ids.len(), "{path}");
        for record in &records {
            let i = ids.iter().position(|id| record["id"] == **id);
            let scope = q.scope((listing.whose)(i.unwrap()));
            let what = format!("shop {} {path}: {scope:?}", self.index);
            assert_reports(record, self.ledger.reported(&scope, q), &what);
            // The same record on its own, or broken down.
            let id = record["id"].as_str().unwrap();
            let one = format!("/api/v1/analytics/{}/{id}?{}", listing.one, q.broken_down());
            let answer = get(self.app, self.key, &one).await;
            let expected = match q.breakdown {
                None => record.clone(),
                Some(d) => self.ledger.broken_down(&scope, q, d, false),
            };
            assert_eq!(answer["data"], expected, "shop {} {one}", self.index);
            assert_eq!(answer["meta"], meta(self.tz, q), "{one}");
        }
        let csv = get_csv(
            self.app,
            self.key,
            &format!("{path}&format=csv"),
            &format!("videoapp-{}-{}-to-{}.csv", listing.list, q.first, q.last),
        )
        .await;
        let what = format!("shop {} {path} CSV", self.index);
        assert_csv_is(&csv, listing.leading, q.compare.is_some(), &records, &what);
    }

    pub async fn check_summary(&self, q: &Query) {
        let path = format!("/api/v1/analytics/summary?{}", q.broken_down());
        let summary = get(self.app, self.key, &path).await;
        let scope = q.scope(Whose::Shop);
        let data = match q.breakdown {
            None => {
                let (current, comparison) = self.ledger.reported(&scope, q);
                let mut data = current.summary();
                if let Some(comparison) = comparison {
                    data["comparison"] = json!({ "metrics": comparison.summary() });
                }
                data
            }
            Some(d) => self.ledger.broken_down(&scope, q, d, true),
        };
        assert_eq!(summary["data"], data, "shop {} {path}", self.index);
        assert_eq!(summary["meta"], meta(self.tz, q), "{path}");
    }

    /// Every endpoint, about one query.
    pub async fn ask(&self, q: &Query) {
        self.check_list(&VIDEO_LIST, self.videos, q).await;
        self.check_list(&WIDGET_LIST, self.widgets, q).await;
        self.check_summary(q).await;
        check_series(self, q).await;
    }
}

/// Asks every shop every query, a few at a time.
pub async fn check(app: &TestApp, world: &World, events: &[GeneratedEvent], queries: &[Query]) {
    let shops: Vec<Shop> = (0..world.shops.len())
        .map(|i| Shop {
            app,
            index: i,
            tz: world.timezones[i],
            key: &world.keys[i],
            videos: &world.videos[i],
            widgets: &world.widgets[i],
            ledger: Ledger::new(events, i, world.timezones[i]),
        })
        .collect();
    let asked = shops
        .iter()
        .flat_map(|shop| queries.iter().map(|q| shop.ask(q)));
    futures::stream::iter(asked)
        .buffer_unordered(4)
        .collect::<Vec<()>>()
        .await;
}

/// Runs `cases` of `scenario` (the events to send, the queries to ask) on one service that
/// keeps every timestamp as sent; each case gets shops of its own.
pub fn recount_cases<S>(cases: u32, scenario: S)
where
    S: Strategy<Value = (Vec<GeneratedEvent>, Vec<Query>)>,
{
    recount_cases_with(cases, scenario, |_| {});
}

/// [`recount_cases`] on a service whose settings `adjust` changes (e.g. to run on a cluster).
pub fn recount_cases_with<S>(cases: u32, scenario: S, adjust: impl FnOnce(&mut Settings))
where
    S: Strategy<Value = (Vec<GeneratedEvent>, Vec<Query>)>,
{
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let app = runtime.block_on(spawn_app_with(|s| {
        adjust(s);
        // Ingest replaces a timestamp more than 7 days old (or a day ahead) by the receive time;
        // a wide accepted window keeps every generated one, whenever the test runs.
        s.event_max_past = Duration::from_secs(50 * 365 * 86_400);
        s.event_max_future = Duration::from_secs(50 * 365 * 86_400);
        s.rate_limit_per_minute = 100000;
    }));
    let mut runner = TestRunner::new(ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let case = AtomicUsize::new(0);
    runner
        .run(&scenario, |(events, queries)| {
            let case = case.fetch_add(1, Ordering::Relaxed);
            runtime.block_on(async {
                let world = build_world(&app, case).await;
                send(&app, &world, &events).await;
                check(&app, &world, &events, &queries).await;
            });
            Ok(())
        })
        .unwrap();
}

/// The dates the events fall on: the window with the previous period of its longest range, and
/// the same dates a year earlier.
pub fn window_season() -> Vec<(NaiveDate, NaiveDate)> {
    let ws = window_start();
    vec![
        // The window and, before it, the previous period of its longest range.
        (
            ws - Days::new(WINDOW_DAYS + 5),
            ws + Days::new(WINDOW_DAYS + 2),
        ),
        // The same dates a year earlier, for previous_year.
        (
            ws - Months::new(12) - Days::new(3),
            ws - Months::new(12) + Days::new(WINDOW_DAYS + 3),
        ),
    ]
}
