//! `--plot FILE.png` of `xehe bench`: a bar chart drawn with `plotters` into a PNG, text in
//! DejaVu Sans embedded from the `dejavu` crate (no system fonts needed).

use crate::{Error, Result};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;
use std::sync::OnceLock;

/// Register DejaVu Sans as plotters' `sans-serif` once per process.
fn register_font() -> Result<()> {
    static DONE: OnceLock<bool> = OnceLock::new();
    let ok = *DONE.get_or_init(|| {
        plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
            .is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidArgument(
            "plot: the embedded DejaVu Sans font did not load".into(),
        ))
    }
}

/// Draw one bar per `(label, value)` into a PNG at `path` (700 px high, at least 1200 px and
/// 240 px per bar wide), with `title` above, `y_label` on the vertical axis, labels under the
/// bars and each value above its bar (values ≥ 0).
///
/// # Errors
/// `InvalidArgument` for no bars, a negative or non-finite value, or a drawing failure;
/// `Io` when the file cannot be written.
pub fn bar_chart(path: &Path, title: &str, y_label: &str, bars: &[(String, f64)]) -> Result<()> {
    if bars.is_empty() {
        return Err(Error::InvalidArgument("plot: nothing to draw".into()));
    }
    if bars.iter().any(|(_, v)| !v.is_finite() || *v < 0.0) {
        return Err(Error::InvalidArgument(
            "plot: values must be finite and ≥ 0".into(),
        ));
    }
    register_font()?;
    let fail =
        |e: &dyn std::fmt::Display| Error::InvalidArgument(format!("plot {}: {e}", path.display()));
    let top = bars.iter().map(|(_, v)| *v).fold(0.0, f64::max).max(1e-9) * 1.1;
    let width = (240 * bars.len()).max(1200) as u32;
    let root = BitMapBackend::new(path, (width, 700)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 26))
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d((0..bars.len() - 1).into_segmented(), 0f64..top)
        .map_err(|e| fail(&e))?;
    let label = |v: &SegmentValue<usize>| match v {
        SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
            bars.get(*i).map_or(String::new(), |(l, _)| l.clone())
        }
        SegmentValue::Last => String::new(),
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(bars.len())
        .x_label_formatter(&label)
        .x_label_style(("sans-serif", 14))
        .y_desc(y_label)
        .label_style(("sans-serif", 16))
        .draw()
        .map_err(|e| fail(&e))?;
    chart
        .draw_series(
            Histogram::vertical(&chart)
                .style(BLUE.mix(0.7).filled())
                .margin(8)
                .data(bars.iter().enumerate().map(|(i, (_, v))| (i, *v))),
        )
        .map_err(|e| fail(&e))?;
    chart
        .draw_series(bars.iter().enumerate().map(|(i, (_, v))| {
            Text::new(
                format!("{v:.3}"),
                (SegmentValue::CenterOf(i), *v + top * 0.01),
                ("sans-serif", 14)
                    .into_text_style(&root)
                    .pos(Pos::new(HPos::Center, VPos::Bottom)),
            )
        }))
        .map_err(|e| fail(&e))?;
    root.present().map_err(|e| fail(&e))?;
    Ok(())
}

/// One panel of [`line_panels`]: named series of `(x, y)` points.
pub struct Panel<'a> {
    /// Caption above the panel.
    pub title: &'a str,
    /// Horizontal axis label.
    pub x_label: &'a str,
    /// Vertical axis label.
    pub y_label: &'a str,
    /// `(name, points)`, each drawn as a line with markers, in the legend.
    pub series: Vec<(String, Vec<(f64, f64)>)>,
}

/// Draw `panels` side by side into a PNG at `path` (600 × 560 px per panel), `title` above
/// them; earlier series are drawn wider, so a later one equal to it shows inside it.
///
/// # Errors
/// `InvalidArgument` for no panels, an empty or non-finite series, or a drawing failure;
/// `Io` when the file cannot be written.
pub fn line_panels(path: &Path, title: &str, panels: &[Panel<'_>]) -> Result<()> {
    let all = || panels.iter().flat_map(|p| p.series.iter().flat_map(|(_, s)| s.iter()));
    if panels.is_empty() || panels.iter().any(|p| p.series.iter().any(|(_, s)| s.is_empty())) {
        return Err(Error::InvalidArgument("plot: nothing to draw".into()));
    }
    if all().any(|(x, y)| !x.is_finite() || !y.is_finite()) {
        return Err(Error::InvalidArgument("plot: values must be finite".into()));
    }
    register_font()?;
    let fail = |e: &dyn std::fmt::Display| Error::InvalidArgument(format!("plot {}: {e}", path.display()));
    let root = BitMapBackend::new(path, (600 * panels.len() as u32, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let size = (1800 * panels.len() / title.chars().count().max(1)).clamp(12, 24) as u32;
    let root = root.titled(title, ("sans-serif", size)).map_err(|e| fail(&e))?;
    let colors = [RED, BLUE, GREEN, BLACK];
    for (area, p) in root.split_evenly((1, panels.len())).iter().zip(panels) {
        let pts = || p.series.iter().flat_map(|(_, s)| s.iter());
        let (x0, x1) = pts().fold((f64::MAX, f64::MIN), |(a, b), &(x, _)| (a.min(x), b.max(x)));
        let (y0, y1) = pts().fold((f64::MAX, f64::MIN), |(a, b), &(_, y)| (a.min(y), b.max(y)));
        let pad = ((y1 - y0) * 0.08).max(1e-6);
        let mut chart = ChartBuilder::on(area)
            .caption(p.title, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1.max(x0 + 1.0), (y0 - pad)..(y1 + pad))
            .map_err(|e| fail(&e))?;
        chart
            .configure_mesh()
            .x_desc(p.x_label)
            .y_desc(p.y_label)
            .label_style(("sans-serif", 14))
            .draw()
            .map_err(|e| fail(&e))?;
        for (i, (name, s)) in p.series.iter().enumerate() {
            let color = colors[i % colors.len()];
            // Earlier series wider, so one drawn over an equal one stays visible.
            let width = (5 - 2 * i.min(2)) as u32;
            chart
                .draw_series(LineSeries::new(s.iter().copied(), color.stroke_width(width)))
                .map_err(|e| fail(&e))?
                .label(name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
            chart
                .draw_series(s.iter().map(|&(x, y)| Circle::new((x, y), 3, color.filled())))
                .map_err(|e| fail(&e))?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .label_font(("sans-serif", 14))
            .draw()
            .map_err(|e| fail(&e))?;
    }
    root.present().map_err(|e| fail(&e))?;
    Ok(())
}
