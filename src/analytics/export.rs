//! CSV answers of the lists (videos, widgets), the time series and the lift: `format=csv` or `Accept:
//! text/csv`. Every row of the range in the list's order, RFC 4180 (the `csv` crate's quoting,
//! CRLF line ends), written a chunk of rows at a time as the client reads: the rows' numbers are
//! held (one per video, widget or bucket, as for a page), the text never whole.

use std::borrow::Cow;
use std::convert::Infallible;

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use super::dates::DateRange;
use super::metrics::{AttributedMetrics, Comparison, Metrics};

/// Rows written into one chunk of the body.
const ROWS_PER_CHUNK: usize = 256;

/// The answer's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    Json,
    Csv,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FormatQuery {
    /// `csv` for every row of the range as CSV (paging ignored). Default: JSON, or CSV when the
    /// request's `Accept` names `text/csv`.
    #[param(inline)]
    format: Option<Format>,
}

impl FormatQuery {
    /// `format=` when given, else CSV when `Accept` asks for `text/csv`.
    pub fn wants_csv(&self, headers: &HeaderMap) -> bool {
        match self.format {
            Some(format) => format == Format::Csv,
            None => headers
                .get_all(header::ACCEPT)
                .iter()
                .filter_map(|value| value.to_str().ok())
                .flat_map(|value| value.split(','))
                .any(|media| {
                    let mut parts = media.split(';');
                    let essence = parts.next().unwrap_or("").trim();
                    // `q=0` names a type only to refuse it.
                    let refused = parts.filter_map(|p| p.split_once('=')).any(|(k, v)| {
                        k.trim().eq_ignore_ascii_case("q")
                            && v.trim().parse::<f32>().is_ok_and(|q| q == 0.0)
                    });
                    essence.eq_ignore_ascii_case("text/csv") && !refused
                }),
        }
    }
}

/// On every answer of an endpoint that can answer CSV: the format may follow `Accept`, so a
/// cache must key on it.
pub const VARY_ACCEPT: [(header::HeaderName, HeaderValue); 1] =
    [(header::VARY, HeaderValue::from_static("accept"))];

/// A record that is a CSV row: its own leading columns, then the metrics.
pub trait CsvRow {
    const COLUMNS: &'static [&'static str];
    fn write_leading(&self, row: &mut csv::StringRecord);
    fn metrics(&self) -> (&Metrics, Option<&Comparison>);
}

const METRIC_COLUMNS: [&str; 19] = [
    "impressions",
    "views",
    "clicks",
    "add_to_cart",
    "orders",
    "revenue",
    "direct_add_to_cart",
    "direct_orders",
    "direct_revenue",
    "influenced_add_to_cart",
    "influenced_orders",
    "influenced_revenue",
    "watch_time_seconds",
    "avg_watch_seconds",
    "completion_rate",
    "reached_p25",
    "reached_p50",
    "reached_p75",
    "reached_p100",
];

fn write_metrics(m: &Metrics, row: &mut csv::StringRecord) {
    let counts = [m.impressions, m.views, m.clicks, m.add_to_cart, m.orders];
    for count in counts {
        row.push_field(&count.to_string());
    }
    row.push_field(m.revenue.as_str());
    let split = |a: &AttributedMetrics, row: &mut csv::StringRecord| {
        row.push_field(&a.add_to_cart.to_string());
        row.push_field(&a.orders.to_string());
        row.push_field(a.revenue.as_str());
    };
    split(&m.attribution.direct, row);
    split(&m.attribution.influenced, row);
    let w = &m.watching;
    for figure in [
        &w.watch_time_seconds,
        &w.avg_watch_seconds,
        &w.completion_rate,
    ] {
        row.push_field(figure.as_str());
    }
    for count in [w.reached.p25, w.reached.p50, w.reached.p75, w.reached.p100] {
        row.push_field(&count.to_string());
    }
}

/// A cell as a spreadsheet may safely open it. A cell that starts with `=`, `+`, `-`, `@`, a tab
/// or a carriage return is run as a formula by Excel, LibreOffice and Sheets, so a video titled
/// `=HYPERLINK(…)` would be a link, or worse, in the merchant's export. As OWASP recommends, such
/// a cell gets a leading `'`, which spreadsheets show as text; the `csv` writer then quotes it as
/// any other. The service's own numbers (`-12.50` for a refund) are left as they are: a plain
/// number runs nothing.
fn neutralised(cell: &str) -> Cow<'_, [u8]> {
    let runs_as_formula = cell.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if runs_as_formula && !is_plain_number(cell) {
        Cow::Owned([b"'", cell.as_bytes()].concat())
    } else {
        Cow::Borrowed(cell.as_bytes())
    }
}

/// `-12`, `-12.50`: an optional minus, digits, and at most one point followed by digits.
fn is_plain_number(cell: &str) -> bool {
    let digits = cell.strip_prefix('-').unwrap_or(cell);
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, "0"));
    !whole.is_empty()
        && !fraction.is_empty()
        && whole.bytes().all(|b| b.is_ascii_digit())
        && fraction.bytes().all(|b| b.is_ascii_digit())
}

/// The attachment's name: the list and the range, `videoapp-videos-2026-01-01-to-2026-12-31.csv`.
pub fn file_name(list: &str, range: &DateRange) -> String {
    format!("videoapp-{list}-{}-to-{}.csv", range.start, range.end)
}

/// `rows` as a streamed CSV attachment, with the comparison's columns when `compared`.
pub fn respond<R: CsvRow + Send + 'static>(
    file_name: &str,
    compared: bool,
    rows: Vec<R>,
) -> Response {
    respond_under(file_name, compared, &[R::COLUMNS], rows)
}

/// [`respond`], the leading columns named by `leading` (a breakdown's rows lead with their
/// dimension, named after it).
pub fn respond_under<R: CsvRow + Send + 'static>(
    file_name: &str,
    compared: bool,
    leading: &[&[&str]],
    rows: Vec<R>,
) -> Response {
    let mut header = csv::StringRecord::new();
    for column in leading.iter().copied().flatten().chain(&METRIC_COLUMNS) {
        header.push_field(column);
    }
    if compared {
        for column in METRIC_COLUMNS {
            header.push_field(&format!("comparison_{column}"));
        }
    }
    let mut rows = rows.into_iter();
    let mut header = Some(header);
    let chunks = std::iter::from_fn(move || {
        let mut out = csv::WriterBuilder::new()
            .terminator(csv::Terminator::CRLF)
            .from_writer(Vec::new());
        let mut record = csv::StringRecord::new();
        let mut written = 0;
        if let Some(header) = header.take() {
            out.write_record(&header).expect("writing to memory");
        }
        for row in rows.by_ref().take(ROWS_PER_CHUNK) {
            record.clear();
            row.write_leading(&mut record);
            let (metrics, comparison) = row.metrics();
            write_metrics(metrics, &mut record);
            if let Some(comparison) = comparison {
                write_metrics(&comparison.metrics, &mut record);
            }
            out.write_record(record.iter().map(neutralised))
                .expect("writing to memory");
            written += 1;
        }
        let bytes = out.into_inner().expect("writing to memory");
        (!bytes.is_empty() || written > 0).then(|| Ok::<_, Infallible>(Bytes::from(bytes)))
    });
    attachment(file_name, Body::from_stream(futures::stream::iter(chunks)))
}

/// One header and one row of cells (an answer that is one record, such as the lift), each cell
/// made safe for a spreadsheet as the lists' are.
pub fn respond_single(file_name: &str, header: &[String], row: &[String]) -> Response {
    let mut out = csv::WriterBuilder::new()
        .terminator(csv::Terminator::CRLF)
        .from_writer(Vec::new());
    out.write_record(header).expect("writing to memory");
    out.write_record(row.iter().map(|cell| neutralised(cell)))
        .expect("writing to memory");
    let bytes = out.into_inner().expect("writing to memory");
    attachment(file_name, Body::from(bytes))
}

/// `body` as a CSV attachment named `file_name`.
fn attachment(file_name: &str, body: Body) -> Response {
    let disposition = format!("attachment; filename=\"{file_name}\"");
    (
        VARY_ACCEPT,
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/csv; charset=utf-8"),
            ),
            (
                header::CONTENT_DISPOSITION,
                HeaderValue::from_str(&disposition)
                    .expect("a file name of ASCII letters, digits and dashes"),
            ),
        ],
        body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytics::queries::{Reached, Totals};

    struct Named(String, Metrics, Option<Comparison>);

    impl CsvRow for Named {
        const COLUMNS: &'static [&'static str] = &["name"];
        fn write_leading(&self, row: &mut csv::StringRecord) {
            row.push_field(&self.0);
        }
        fn metrics(&self) -> (&Metrics, Option<&Comparison>) {
            (&self.1, self.2.as_ref())
        }
    }

    async fn body_of(response: Response) -> String {
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn fields_are_quoted_as_rfc_4180_says_with_crlf_line_ends() {
        let totals = Totals {
            views: 3,
            clicks: 2,
            revenue_e4: 123_456,
            watched_ms: 25_005,
            watches: 2,
            reached: Reached {
                p25: 2,
                p50: 2,
                p75: 1,
                p95: 1,
                p100: 0,
            },
            ..Totals::default()
        };
        let rows = vec![
            Named("plain".into(), totals.into(), None),
            Named("a, \"quoted\"\nline".into(), Totals::default().into(), None),
        ];
        let response = respond("x.csv", false, rows);
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            "text/csv; charset=utf-8"
        );
        assert_eq!(
            response.headers()[header::CONTENT_DISPOSITION],
            "attachment; filename=\"x.csv\""
        );
        let text = body_of(response).await;
        let lines: Vec<&str> = text.split("\r\n").collect();
        assert_eq!(lines[0], format!("name,{}", METRIC_COLUMNS.join(",")));
        assert_eq!(
            lines[1],
            "plain,0,3,2,0,0,12.35,0,0,0.00,0,0,0.00,25.01,12.50,50.00,2,2,1,0"
        );
        assert_eq!(
            text.split_once("\r\n")
                .unwrap()
                .1
                .split_once("\r\n")
                .unwrap()
                .1,
            "\"a, \"\"quoted\"\"\nline\",0,0,0,0,0,0.00,0,0,0.00,0,0,0.00,0.00,0.00,0.00,0,0,0,0\r\n"
        );
    }

    #[tokio::test]
    async fn many_rows_arrive_in_several_chunks_and_comparisons_add_columns() {
        let rows: Vec<Named> = (0..1000)
            .map(|i| {
                let comparison = Comparison::of(Some(Totals::default()));
                Named(format!("n{i}"), Totals::default().into(), comparison)
            })
            .collect();
        let response = respond("x.csv", true, rows);
        let mut body = response.into_body().into_data_stream();
        let mut chunks = 0;
        let mut text = Vec::new();
        while let Some(chunk) = futures::StreamExt::next(&mut body).await {
            text.extend_from_slice(&chunk.unwrap());
            chunks += 1;
        }
        assert_eq!(chunks, 1000usize.div_ceil(ROWS_PER_CHUNK));
        let text = String::from_utf8(text).unwrap();
        assert_eq!(text.lines().count(), 1001);
        let header = text.lines().next().unwrap();
        assert!(header.ends_with(",comparison_reached_p100"), "{header}");
        assert_eq!(header.split(',').count(), 1 + 2 * METRIC_COLUMNS.len());
    }

    #[tokio::test]
    async fn cells_a_spreadsheet_would_run_as_formulas_are_neutralised() {
        let formulas = [
            "=HYPERLINK(\"https://example.com\",\"x\")",
            "+1+1",
            "-2+3",
            "@SUM(A1)",
            "\tlooks blank",
            "\r=1",
            "-",
        ];
        let mut rows: Vec<Named> = formulas
            .iter()
            .map(|f| Named(f.to_string(), Totals::default().into(), None))
            .collect();
        let refund = Totals {
            revenue_e4: -125_000,
            ..Totals::default()
        };
        rows.push(Named("-12".into(), refund.into(), None));
        rows.push(Named("plain = text".into(), Totals::default().into(), None));
        let text = body_of(respond("x.csv", false, rows)).await;

        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let names: Vec<String> = reader
            .records()
            .map(|r| r.unwrap()[0].to_string())
            .collect();
        let expected: Vec<String> = formulas.iter().map(|f| format!("'{f}")).collect();
        assert_eq!(names[..formulas.len()], expected[..]);
        // Numbers, the service's own and a merchant's, stay numbers; text stays as it was.
        assert_eq!(names[formulas.len()], "-12");
        assert_eq!(names[formulas.len() + 1], "plain = text");
        let refund_row = text.lines().nth(formulas.len() + 1).unwrap();
        assert!(refund_row.contains(",-12.50,"), "{refund_row}");
    }

    #[test]
    fn csv_is_asked_for_by_format_first_then_by_accept() {
        let accept = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::ACCEPT, value.parse().unwrap());
            headers
        };
        let query = |format| FormatQuery { format };
        assert!(query(None).wants_csv(&accept("text/csv")));
        assert!(query(None).wants_csv(&accept("application/json;q=0.5, Text/CSV; charset=utf-8")));
        assert!(!query(None).wants_csv(&accept("application/json, */*")));
        assert!(!query(None).wants_csv(&accept("application/json, text/csv;q=0")));
        assert!(!query(None).wants_csv(&accept("text/csv; Q = 0.000")));
        assert!(query(None).wants_csv(&accept("text/csv;q=0.1")));
        assert!(!query(None).wants_csv(&HeaderMap::new()));
        assert!(query(Some(Format::Csv)).wants_csv(&HeaderMap::new()));
        assert!(!query(Some(Format::Json)).wants_csv(&accept("text/csv")));
    }
}
