//! What every chart shares: the embedded font (so the same input gives the same pixels on every machine), the
//! palette, the canvas size and the deterministic PNG encoding.

use std::sync::Once;

use plotters::style::{FontStyle, RGBColor};

/// Canvas size: fits a GitHub page column.
pub const WIDTH: u32 = 1000;
pub const HEIGHT: u32 = 600;

/// The font family name charts ask plotters for; registered from the embedded DejaVu Sans.
pub const FONT: &str = "vramdiff-sans";

static REGULAR: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");
static BOLD: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans-Bold.ttf");

/// Register the embedded fonts with plotters (once per process).
pub fn register_fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bytes are DejaVu Sans as shipped by Debian's fonts-dejavu-core: valid TrueType, so
        // registration cannot fail; if it ever did, text would be missing from the charts, not wrong.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, REGULAR);
        let _ = plotters::style::register_font(FONT, FontStyle::Bold, BOLD);
    });
}

/// One colour per memory component, the same in every chart.
pub const WEIGHTS: RGBColor = RGBColor(54, 110, 180);
pub const KV: RGBColor = RGBColor(230, 140, 40);
pub const GRAPH: RGBColor = RGBColor(200, 70, 70);
pub const PROJECTOR: RGBColor = RGBColor(140, 90, 170);
pub const FLOOR: RGBColor = RGBColor(150, 150, 150);
pub const UNATTRIBUTED: RGBColor = RGBColor(90, 170, 110);
pub const OTHER: RGBColor = RGBColor(200, 200, 200);
pub const ESTIMATED: RGBColor = RGBColor(120, 150, 200);
pub const ACTUAL: RGBColor = RGBColor(40, 70, 130);
pub const CAPACITY: RGBColor = RGBColor(20, 20, 20);

/// Encode an RGB buffer as PNG with no timestamp or other varying chunk.
pub fn encode_png(rgb: &[u8], width: u32, height: u32) -> Result<Vec<u8>, png::EncodingError> {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(png::Compression::Default);
        let mut writer = encoder.write_header()?;
        writer.write_image_data(rgb)?;
    }
    Ok(out)
}

/// Bytes to GiB for an axis.
pub fn gib(bytes: i64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}
