//! Reading Prometheus text.

/// The value of the sample `name` whose labels are exactly `labels` (in any order) in Prometheus
/// text, or `None` if there is no such sample. `name` is the full sample name: a histogram's
/// `…_count`, `…_sum` or `…_bucket` (with its `le` label).
pub fn metric_value(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let mut wanted: Labels = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    wanted.sort();
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .filter_map(parse_sample)
        .find(|(sample, sample_labels, _)| sample == name && *sample_labels == wanted)
        .map(|(_, _, value)| value)
}

/// A sample's labels, sorted by name.
type Labels = Vec<(String, String)>;

/// One line of Prometheus text: its name, its labels and its value.
fn parse_sample(line: &str) -> Option<(String, Labels, f64)> {
    let name_end = line.find(['{', ' '])?;
    let name = line[..name_end].to_string();
    let mut rest = &line[name_end..];
    let mut labels = Vec::new();
    if let Some(mut inside) = rest.strip_prefix('{') {
        // Labels: name="value" (with \" \\ \n escapes), separated by ',', up to '}'.
        loop {
            inside = inside.trim_start_matches(',');
            if let Some(after) = inside.strip_prefix('}') {
                rest = after;
                break;
            }
            let (key, after_key) = inside.split_once("=\"")?;
            let mut value = String::new();
            let mut chars = after_key.char_indices();
            let close = loop {
                match chars.next()? {
                    (_, '\\') => match chars.next()?.1 {
                        'n' => value.push('\n'),
                        other => value.push(other),
                    },
                    (i, '"') => break i,
                    (_, other) => value.push(other),
                }
            };
            labels.push((key.to_string(), value));
            inside = &after_key[close + 1..];
        }
    }
    labels.sort();
    let value = rest.split_whitespace().next()?.parse().ok()?;
    Some((name, labels, value))
}

#[test]
fn a_sample_is_found_by_its_name_and_exact_label_set() {
    let text = "# TYPE http_requests_total counter\n\
        http_requests_total{method=\"GET\",route=\"/a/{b}\",status=\"404\"} 3\n\
        http_requests_total{method=\"GET\",route=\"/a/{b}\",status=\"404\",x=\"y\"} 5\n\
        events_rejected_total{reason=\"a \\\"quoted\\\", odd} label\"} 2\n\
        events_accepted_total 10\n\
        spool_sync_duration_seconds_bucket{le=\"+Inf\"} 7\n";
    let get = |name, labels: &[(&str, &str)]| metric_value(text, name, labels);
    assert_eq!(
        get(
            "http_requests_total",
            &[("status", "404"), ("method", "GET"), ("route", "/a/{b}")]
        ),
        Some(3.0)
    );
    assert_eq!(get("http_requests_total", &[("method", "GET")]), None);
    assert_eq!(
        get(
            "events_rejected_total",
            &[("reason", "a \"quoted\", odd} label")]
        ),
        Some(2.0)
    );
    assert_eq!(get("events_accepted_total", &[]), Some(10.0));
    assert_eq!(get("events_accepted", &[]), None);
    assert_eq!(
        get("spool_sync_duration_seconds_bucket", &[("le", "+Inf")]),
        Some(7.0)
    );
}
