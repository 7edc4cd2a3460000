//! Noticing that one log ends and another begins inside a single stream.
//!
//! `cat server.log.1 server.log | vramdiff` or a bundle of logs from several machines reads as one stream.
//! A server restart line resets what the assembler carries across loads (the Ollama version, the GPU
//! inventory), but a log excerpt often starts after that line, so the next log's loads would inherit the
//! previous server's version and GPUs — and the version changes how the estimate is read. Go slog records
//! carry an RFC 3339 `time=`; when it jumps back by more than [`MAX_BACKWARDS_MS`] the stream has moved to
//! another log. Records from one server interleave out of order by milliseconds, never by an hour, and the
//! offset is applied so a time-zone change is not a jump.

/// How far back a record's time may go before the stream is taken to be another log.
pub const MAX_BACKWARDS_MS: i64 = 60 * 60 * 1000;

/// Follows the `time=` of slog records.
#[derive(Debug, Default)]
pub struct Clock {
    latest: Option<i64>,
    /// The `time=` text of the last record parsed, up to the minute and its zone (`2025-07-20T09:43` and
    /// `+08:00`): a record in the same minute of the same zone cannot jump back an hour, so it is not parsed.
    same_minute: [u8; 16],
    same_zone: [u8; 6],
}

impl Clock {
    pub fn new() -> Self {
        Clock::default()
    }

    /// Look at one logical line; true when its `time=` is more than [`MAX_BACKWARDS_MS`] before the latest
    /// time seen (the latest is then reset to it).
    pub fn jumps_back(&mut self, line: &str) -> bool {
        let Some(stamp) = line.strip_prefix("time=") else {
            return false;
        };
        let token = stamp.as_bytes();
        let token = &token[..memchr::memchr(b' ', token).unwrap_or(token.len())];
        // The zone: `Z`, or `+hh:mm`/`-hh:mm` at the end.
        let zone = |t: &[u8]| -> [u8; 6] {
            let mut z = [0u8; 6];
            if t.last() == Some(&b'Z') {
                z[0] = b'Z';
            } else {
                z.copy_from_slice(&t[t.len() - 6..]);
            }
            z
        };
        let keys = (token.len() >= 22).then(|| (&token[..16], zone(token)));
        if let Some((minute, zone)) = keys {
            if self.latest.is_some() && minute == self.same_minute && zone == self.same_zone {
                return false;
            }
        }
        let Some(t) = parse_rfc3339_ms(stamp) else {
            return false;
        };
        if let Some((minute, zone)) = keys {
            self.same_minute.copy_from_slice(minute);
            self.same_zone = zone;
        }
        match self.latest {
            Some(latest) if t < latest - MAX_BACKWARDS_MS => {
                self.latest = Some(t);
                true
            }
            Some(latest) if t <= latest => false,
            _ => {
                self.latest = Some(t);
                false
            }
        }
    }
}

fn digits(s: &[u8]) -> Option<i64> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(s.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))
}

/// Days from 1970-01-01 to a civil date (proleptic Gregorian), after Howard Hinnant's `days_from_civil`.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `2025-07-20T09:43:26.111+08:00` (or `Z`, with or without a fraction) to milliseconds since the epoch, UTC.
pub fn parse_rfc3339_ms(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (y, mo, d) = (digits(&b[0..4])?, digits(&b[5..7])?, digits(&b[8..10])?);
    let (h, mi, s) = (
        digits(&b[11..13])?,
        digits(&b[14..16])?,
        digits(&b[17..19])?,
    );
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let mut i = 19;
    let mut ms = 0;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let frac = &b[start..i];
        ms = digits(&frac[..frac.len().min(3)])? * [100, 10, 1][frac.len().min(3) - 1];
    }
    let offset_min = match b.get(i) {
        Some(b'Z') => 0,
        Some(&sign @ (b'+' | b'-')) if b.len() >= i + 6 && b[i + 3] == b':' => {
            let m = digits(&b[i + 1..i + 3])? * 60 + digits(&b[i + 4..i + 6])?;
            if sign == b'-' {
                -m
            } else {
                m
            }
        }
        _ => return None,
    };
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s - offset_min * 60;
    Some(secs * 1000 + ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_minute_in_another_zone_is_still_compared() {
        let mut c = Clock::new();
        assert!(!c.jumps_back("time=2025-07-20T09:43:26.111+08:00 level=INFO msg=a"));
        assert!(!c.jumps_back("time=2025-07-20T09:43:59.999+08:00 level=INFO msg=b"));
        // Same clock text, but UTC: eight hours later, not earlier.
        assert!(!c.jumps_back("time=2025-07-20T09:43:10.000Z level=INFO msg=c"));
        // 09:43+08:00 is 01:43Z: more than an hour before 09:43Z.
        assert!(c.jumps_back("time=2025-07-20T09:43:30.000+08:00 level=INFO msg=d"));
    }

    #[test]
    fn offsets_are_applied() {
        let utc = parse_rfc3339_ms("2025-07-20T01:43:26.111Z").unwrap();
        assert_eq!(parse_rfc3339_ms("2025-07-20T09:43:26.111+08:00"), Some(utc));
        assert_eq!(parse_rfc3339_ms("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_rfc3339_ms("2025-07-20T09:43:26-07:00 x").unwrap() % 1000,
            0
        );
        assert!(parse_rfc3339_ms("2025-13-20T09:43:26Z").is_none());
        assert!(parse_rfc3339_ms("2025-07-20T09:43:26.").is_none());
    }

    #[test]
    fn only_a_jump_back_past_an_hour_is_another_log() {
        let mut c = Clock::new();
        assert!(!c.jumps_back("time=2025-07-20T09:43:26.111+08:00 level=INFO"));
        assert!(!c.jumps_back("time=2025-07-20T09:43:25.000+08:00 level=INFO"));
        assert!(!c.jumps_back("load_tensors: no time"));
        assert!(c.jumps_back("time=2024-08-30T04:40:18.460Z level=INFO"));
        assert!(!c.jumps_back("time=2024-08-30T04:40:19.460Z level=INFO"));
    }
}
