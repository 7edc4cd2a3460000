//! Value parsers (nom): sizes, lists, logfmt records and Go `%+v` structs.
//!
//! The grammar's regexes find a line and cut out its fields; these functions turn field text into typed
//! values. They never panic and return `None` for text they do not understand, so a malformed value costs
//! one field, not the line.

use nom::branch::alt;
use nom::bytes::complete::{escaped_transform, is_not, tag, take_while, take_while1};
use nom::character::complete::{char, digit1, space0, space1};
use nom::combinator::{all_consuming, map, opt, recognize, value};
use nom::multi::{separated_list0, separated_list1};
use nom::sequence::{delimited, preceded};
use nom::{IResult, Parser};

use crate::model::{Quantity, GIB, KIB, MIB, TIB};

/// A decimal number as printed: its digits without the point, and how many of them follow the point.
fn decimal(input: &str) -> IResult<&str, (u128, u32)> {
    let (rest, text) = recognize((digit1, opt((char('.'), digit1)))).parse(input)?;
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let mut mantissa: u128 = 0;
    for d in int.bytes().chain(frac.bytes()) {
        mantissa = match mantissa
            .checked_mul(10)
            .and_then(|m| m.checked_add((d - b'0') as u128))
        {
            Some(m) => m,
            None => {
                return Err(nom::Err::Failure(nom::error::Error::new(
                    input,
                    nom::error::ErrorKind::TooLarge,
                )))
            }
        };
    }
    Ok((rest, (mantissa, frac.len() as u32)))
}

fn unit(input: &str) -> IResult<&str, i64> {
    alt((
        value(TIB, tag("TiB")),
        value(GIB, tag("GiB")),
        value(MIB, tag("MiB")),
        value(KIB, tag("KiB")),
        // clip.cpp ≤ v0.6.5 prints "MB" for what is MiB (divided by 1024²); llama-server's breakdown header
        // and nvidia-smi use MiB. Treat MB as MiB, as the doc says.
        value(MIB, tag("MB")),
        value(1, tag("B")),
    ))
    .parse(input)
}

/// A unit as a person types it on the command line: any case, with or without the `i`, or its initial
/// (`512m`, `1.5GB`, `2G`, `1 GiB`): binary multiples throughout, as every figure vramdiff compares is.
fn typed_unit(input: &str) -> IResult<&str, i64> {
    use nom::bytes::complete::tag_no_case as t;
    alt((
        value(TIB, alt((t("TiB"), t("TB"), t("T")))),
        value(GIB, alt((t("GiB"), t("GB"), t("G")))),
        value(MIB, alt((t("MiB"), t("MB"), t("M")))),
        value(KIB, alt((t("KiB"), t("KB"), t("K")))),
        value(1, t("B")),
    ))
    .parse(input)
}

/// One size: `6.8 GiB`, `4403.49 MiB`, `0 B`, `595.49 MB`, `9866MiB`.
pub fn size(input: &str) -> IResult<&str, Quantity> {
    size_in(input, unit)
}

/// A number and a unit read by `unit`: the one size grammar behind log fields, nvidia-smi cells and
/// command-line arguments.
fn size_in<'a>(
    input: &'a str,
    unit: fn(&'a str) -> IResult<&'a str, i64>,
) -> IResult<&'a str, Quantity> {
    let (rest, (mantissa, scale)) = decimal(input)?;
    let (rest, _) = space0(rest)?;
    let (rest, unit) = unit(rest)?;
    if unit == 1 && scale == 0 {
        // `%d B`: a whole number of bytes is exact.
        return match i64::try_from(mantissa) {
            Ok(b) => Ok((rest, Quantity::exact(b))),
            Err(_) => Err(nom::Err::Failure(nom::error::Error::new(
                input,
                nom::error::ErrorKind::TooLarge,
            ))),
        };
    }
    match Quantity::from_decimal(mantissa, scale, unit) {
        Some(q) => Ok((rest, q)),
        None => Err(nom::Err::Failure(nom::error::Error::new(
            input,
            nom::error::ErrorKind::TooLarge,
        ))),
    }
}

/// Parse a whole field as one size (surrounding spaces and quotes allowed).
pub fn parse_size(text: &str) -> Option<Quantity> {
    let t = text.trim().trim_matches('"').trim();
    all_consuming(size).parse(t).ok().map(|(_, q)| q)
}

/// A size where a bare number is in `bare_unit` (nvidia-smi's `nounits` CSV prints MiB as `9866`); with a
/// unit, as [`parse_size`] reads it (`9866MiB`, `9866 MiB`: ±0.5 MiB).
pub fn parse_size_or_bare(text: &str, bare_unit: i64) -> Option<Quantity> {
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        let (_, (mantissa, _)) = all_consuming(decimal).parse(t).ok()?;
        return Quantity::from_decimal(mantissa, 0, bare_unit);
    }
    parse_size(t)
}

/// A size typed on the command line, in bytes: `512MiB`, `1.5 GiB`, `2G`, `512m`, or a bare byte count.
pub fn parse_typed_size(text: &str) -> Result<i64, String> {
    let t = text.trim();
    if t.starts_with('-') {
        return Err("a size cannot be negative".into());
    }
    let bare = |input| -> IResult<&str, Quantity> {
        let (rest, (mantissa, scale)) = decimal(input)?;
        match Quantity::from_decimal(mantissa, scale, 1) {
            Some(q) => Ok((rest, q)),
            None => Err(nom::Err::Failure(nom::error::Error::new(
                input,
                nom::error::ErrorKind::TooLarge,
            ))),
        }
    };
    match all_consuming(alt((|i| size_in(i, typed_unit), bare))).parse(t) {
        Ok((_, q)) => Ok(q.bytes),
        Err(nom::Err::Failure(_)) => Err(format!("'{text}' is too large")),
        Err(_) => Err(format!(
            "'{text}' is not a size (try 512MiB or 1.5GiB; units B, KiB, MiB, GiB, TiB)"
        )),
    }
}

/// Parse a whole number of MiB as llama.cpp's breakdown table and `--fit` lines print it: truncated
/// (`bytes / MiB`), so `1530` means [1530, 1531) MiB. A leading `-` is allowed (free memory below zero).
pub fn parse_mib_truncated(text: &str) -> Option<Quantity> {
    let n: i64 = text.trim().parse().ok()?;
    Quantity::from_truncated(n, MIB)
}

/// A Go `%+v` list of sizes: `[11.1 GiB 11.1 GiB]`, `[]`, or a bare size.
pub fn parse_size_list(text: &str) -> Option<Vec<Quantity>> {
    let t = text.trim().trim_matches('"').trim();
    let list = delimited(
        (char('['), space0),
        separated_list0(space1, size),
        (space0, char(']')),
    );
    let bare = map(size, |q| vec![q]);
    all_consuming(alt((list, bare)))
        .parse(t)
        .ok()
        .map(|(_, v)| v)
}

fn signed_int(input: &str) -> IResult<&str, i64> {
    let (rest, text) = recognize((opt(char('-')), digit1)).parse(input)?;
    match text.parse() {
        Ok(n) => Ok((rest, n)),
        Err(_) => Err(nom::Err::Failure(nom::error::Error::new(
            input,
            nom::error::ErrorKind::TooLarge,
        ))),
    }
}

/// `layers.split` in every era: `""`, `1,48`, `11,11,11,11`, `[37]`, `[24 25]`, `[]`.
pub fn parse_int_list(text: &str) -> Option<Vec<i64>> {
    let t = text.trim().trim_matches('"').trim();
    if t.is_empty() {
        return Some(Vec::new());
    }
    let bracketed = delimited(
        (char('['), space0),
        separated_list0(
            alt((space1, recognize((space0, char(','), space0)))),
            signed_int,
        ),
        (space0, char(']')),
    );
    let commas = separated_list1(char(','), signed_int);
    all_consuming(alt((bracketed, commas)))
        .parse(t)
        .ok()
        .map(|(_, v)| v)
}

/// A number that may be followed by junk we do not need (`12.4`, `-1`).
pub fn parse_int(text: &str) -> Option<i64> {
    let t = text.trim().trim_matches('"');
    all_consuming(signed_int).parse(t).ok().map(|(_, n)| n)
}

fn go_quoted(input: &str) -> IResult<&str, String> {
    delimited(
        char('"'),
        map(
            opt(escaped_transform(
                is_not("\\\""),
                '\\',
                alt((
                    value("\\", tag("\\")),
                    value("\"", tag("\"")),
                    value("\n", tag("n")),
                    value("\t", tag("t")),
                    value("\r", tag("r")),
                )),
            )),
            |s| s.unwrap_or_default(),
        ),
        char('"'),
    )
    .parse(input)
}

fn bare_key(input: &str) -> IResult<&str, String> {
    map(
        take_while1(|c: char| c != '=' && c != ' ' && c != '"'),
        str::to_string,
    )
    .parse(input)
}

fn bare_value(input: &str) -> IResult<&str, String> {
    map(take_while(|c: char| c != ' '), str::to_string).parse(input)
}

fn pair(input: &str) -> IResult<&str, (String, String)> {
    let (rest, key) = alt((go_quoted, bare_key)).parse(input)?;
    let (rest, value) = preceded(char('='), alt((go_quoted, bare_value))).parse(rest)?;
    Ok((rest, (key, value)))
}

/// A Go slog text record (`time=… level=INFO msg="offload to cuda" layers.model=33 …`) as key/value pairs,
/// in order, with quoted keys and values unescaped. Text that is not `key=value` is skipped word by word,
/// so a cut or re-wrapped record still yields every complete pair.
pub fn parse_logfmt(line: &str) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    let mut rest = line.trim_start();
    while !rest.is_empty() {
        match pair(rest) {
            Ok((after, kv)) => {
                pairs.push(kv);
                rest = after;
            }
            Err(_) => {
                // Skip one word (or a lone quote) and try again.
                let skip = rest.find(' ').unwrap_or(rest.len()).max(1);
                rest = rest.get(skip..).unwrap_or("");
            }
        }
        rest = rest.trim_start();
    }
    pairs
}

/// A Go `%+v` struct (`{Operation:commit LoraPath:[] Parallel:1 … GPULayers:20[ID:GPU-… Layers:20(28..47)] …}`)
/// as field/value pairs. A value runs to the next ` Name:` at bracket depth zero, so nested lists and
/// empty values (`KvCacheType: `) are kept whole.
pub fn parse_go_struct(text: &str) -> Vec<(String, String)> {
    let t = text.trim();
    let t = t.strip_prefix('{').unwrap_or(t);
    let t = t.strip_suffix('}').unwrap_or(t);
    let bytes = t.as_bytes();
    // Positions of field starts: an identifier followed by ':' at depth 0, at the start or after a space.
    let mut starts = Vec::new();
    let mut depth = 0i32;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'[' | b'(' | b'{' => depth += 1,
            b']' | b')' | b'}' => depth -= 1,
            _ => {}
        }
        if depth == 0 && (i == 0 || bytes[i - 1] == b' ') && bytes[i].is_ascii_uppercase() {
            let mut j = i;
            while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
                j += 1;
            }
            if j < bytes.len() && bytes[j] == b':' {
                starts.push((i, j));
            }
        }
        i += 1;
    }
    let mut fields = Vec::with_capacity(starts.len());
    for (n, &(start, colon)) in starts.iter().enumerate() {
        let end = starts.get(n + 1).map(|&(s, _)| s).unwrap_or(t.len());
        let name = &t[start..colon];
        let value = t[colon + 1..end].trim();
        fields.push((name.to_string(), value.to_string()));
    }
    fields
}

/// One GPU's share in a `GPULayers` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuLayerShare {
    pub id: String,
    pub layers: i64,
}

/// `GPULayers:20[ID:GPU-… Layers:20(28..47)]`, `37[ID:0 Layers:20(0..19) ID:1 Layers:17(20..36)]`, `[]`.
pub fn parse_gpu_layers(text: &str) -> Option<(i64, Vec<GpuLayerShare>)> {
    let t = text.trim();
    if t == "[]" || t.is_empty() {
        return Some((0, Vec::new()));
    }
    let (rest, total) = signed_int(t).ok()?;
    let share = (
        preceded(tag("ID:"), take_while(|c: char| c != ' ')),
        preceded((space1, tag("Layers:")), signed_int),
        opt(delimited(char('('), is_not(")"), char(')'))),
    );
    // A pasted or cut line may end inside the list: keep the total and whatever shares are complete.
    let inner = rest.trim().strip_prefix('[').unwrap_or("");
    let inner = inner.strip_suffix(']').unwrap_or(inner);
    let shares = separated_list0(space1, share)
        .parse(inner.trim())
        .map(|(_, s)| s)
        .unwrap_or_default();
    Some((
        total,
        shares
            .into_iter()
            .map(|(id, layers, _)| GpuLayerShare {
                id: id.to_string(),
                layers,
            })
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the `values` fuzz target (fuzz/README.md): 38 digits after the point made the rounding
    /// interval's denominator (2 × 10³⁸) overflow i128, a panic where overflow is checked (a wrong bound where
    /// it is not). A size that precise is refused.
    #[test]
    fn thirty_eight_decimals_do_not_overflow_the_rounding_interval() {
        let tiny = format!("0.{}1", "0".repeat(37));
        for text in [format!("{tiny} B"), format!("{tiny} GiB"), tiny.clone()] {
            assert_eq!(parse_size(&text), None, "{text}");
            assert!(parse_typed_size(&text).is_err(), "{text}");
            assert_eq!(parse_size_list(&format!("[{text}]")), None, "{text}");
        }
        // 37 decimals still read, as the smallest positive interval.
        let q = parse_size(&format!("0.{}1 B", "0".repeat(36))).unwrap();
        assert_eq!((q.low, q.bytes, q.high), (0, 0, 1));
        let fuzzed = b"00000000000.00000000000000000000000000000020000000p00\x00\x00\x00\x00\x00\x00\x1e0\x00\x00\x01iomco\xfe\xff\xff\xff\xff\xff\xff\xffn 22440193\xa600001\xdf?\xa6\"";
        let text = String::from_utf8_lossy(fuzzed);
        assert!(parse_typed_size(&text).is_err());
        assert_eq!(parse_size(&text), None);
    }

    #[test]
    fn one_size_grammar_for_logs_smi_cells_and_typed_arguments() {
        // A log field and an nvidia-smi cell read the same way.
        assert_eq!(parse_size("9866MiB"), parse_size_or_bare("9866", MIB));
        assert_eq!(
            parse_size_or_bare(" 9866 MiB ", MIB),
            parse_size("9866 MiB")
        );
        assert_eq!(parse_size_or_bare("[N/A]", MIB), None);
        // Typed by a person: any case, the initial alone, a bare byte count.
        assert_eq!(parse_typed_size("512m"), Ok(512 * MIB));
        assert_eq!(parse_typed_size("1.5gb"), Ok(3 * GIB / 2));
        assert_eq!(parse_typed_size("0.5 KiB"), Ok(512));
        assert!(parse_typed_size("-1GiB").unwrap_err().contains("negative"));
        assert!(parse_typed_size("1.5GiBs")
            .unwrap_err()
            .contains("not a size"));
        assert!(parse_typed_size("99999999999999TiB")
            .unwrap_err()
            .contains("too large"));
        // Logs never print `GB` for GiB (Ollama's decimal `GB` is another quantity): not read from a log.
        assert_eq!(parse_size("1.5 GB"), None);
    }

    // Values below are cut from real corpus lines, copied into `sample-logs/` (file noted per test).

    #[test]
    fn sizes_in_every_printed_form() {
        // 001: memory.required.kv="1.0 GiB"; llama.cpp "4156.00 MiB"; "0 B" (020); clip "595.49 MB".
        assert_eq!(parse_size("1.0 GiB").unwrap().bytes, GIB);
        assert_eq!(parse_size("4156.00 MiB").unwrap().bytes, 4156 * MIB);
        assert_eq!(parse_size("\"0 B\"").unwrap(), Quantity::exact(0));
        assert_eq!(
            parse_size("595.49 MB").unwrap().bytes,
            (595.49 * MIB as f64).round() as i64
        );
        assert_eq!(parse_size("9866MiB").unwrap().bytes, 9866 * MIB);
        assert!(parse_size("N/A").is_none());
        assert!(parse_size("18446744073709551615 MiB").is_none());
    }

    #[test]
    fn size_lists() {
        // 015: memory.available="[22.0 GiB 22.0 GiB 22.0 GiB 22.0 GiB]"; 014: allocations "[11.4 GiB 0 B]".
        let v = parse_size_list("[22.0 GiB 22.0 GiB 22.0 GiB 22.0 GiB]").unwrap();
        assert_eq!(v.len(), 4);
        let v = parse_size_list("\"[11.4 GiB 0 B]\"").unwrap();
        assert_eq!(v[1], Quantity::exact(0));
        assert_eq!(parse_size_list("[]").unwrap(), vec![]);
    }

    #[test]
    fn layer_split_in_every_era() {
        assert_eq!(parse_int_list("\"\"").unwrap(), Vec::<i64>::new()); // 001
        assert_eq!(parse_int_list("11,11,11,11").unwrap(), vec![11, 11, 11, 11]); // 015
        assert_eq!(parse_int_list("37,0").unwrap(), vec![37, 0]); // 014
        assert_eq!(parse_int_list("[37]").unwrap(), vec![37]); // 012
        assert_eq!(parse_int_list("\"[24 25]\"").unwrap(), vec![24, 25]); // quoted, space-separated
        assert_eq!(parse_int_list("[]").unwrap(), Vec::<i64>::new());
        assert!(parse_int_list("1,,2").is_none());
    }

    #[test]
    fn logfmt_with_quoted_keys_and_escapes() {
        // Quoted keys; `sample-logs/022-windows-cuda-2080ti-newengine-kv-graph-total.log` (Windows path escapes).
        let p = parse_logfmt(
            r#"time=2026-02-25T18:14:34.262+08:00 level=INFO source=server.go:498 msg="loading model" "model layers"=41 requested=-1"#,
        );
        assert!(p.contains(&("model layers".into(), "41".into())));
        assert!(p.contains(&("msg".into(), "loading model".into())));
        let p = parse_logfmt(
            r#"msg="starting runner" cmd="C:\\Users\\ksh\\ollama.exe runner --port 1""#,
        );
        assert_eq!(p[1].1, r"C:\Users\ksh\ollama.exe runner --port 1");
    }

    #[test]
    fn logfmt_survives_a_cut_record() {
        // 016's estimate line is cut mid-key ("… projector.weights="795.9 MiB" projector").
        let p = parse_logfmt(
            r#"msg=offload memory.graph.partial="1.3 GiB" projector.weights="795.9 MiB" projector"#,
        );
        assert_eq!(p.len(), 3);
        let p = parse_logfmt(r#"msg=offload cmd="unterminated"#);
        assert_eq!(p[0], ("msg".into(), "offload".into()));
    }

    #[test]
    fn go_struct_of_a_load_request() {
        // 009: the commit load request.
        let f = parse_go_struct("{Operation:commit LoraPath:[] Parallel:1 BatchSize:1024 FlashAttention:Enabled KvSize:32768 KvCacheType: NumThreads:8 GPULayers:20[ID:GPU-223c73ff-f253-3c8c-d212-82b5d1ce2963 Layers:20(28..47)] MultiUserCache:false ProjectorPath: MainGPU:0 UseMmap:false}");
        let get = |k: &str| f.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("Operation"), Some("commit"));
        assert_eq!(get("KvCacheType"), Some(""));
        assert_eq!(get("KvSize"), Some("32768"));
        let (total, shares) = parse_gpu_layers(get("GPULayers").unwrap()).unwrap();
        assert_eq!(total, 20);
        assert_eq!(shares[0].id, "GPU-223c73ff-f253-3c8c-d212-82b5d1ce2963");
        assert_eq!(get("UseMmap"), Some("false"));
    }

    #[test]
    fn gpu_layers_across_two_gpus() {
        // 032: Operation:fit GPULayers split over two Quadros.
        let (total, shares) = parse_gpu_layers(
            "37[ID:GPU-d5703024-26e4-303b-8104-7d33cce0eeb1 Layers:20(0..19) ID:GPU-cccd2f20-3d96-8813-4051-968238266813 Layers:17(20..36)]",
        )
        .unwrap();
        assert_eq!(total, 37);
        assert_eq!(
            shares.iter().map(|s| s.layers).collect::<Vec<_>>(),
            vec![20, 17]
        );
        assert_eq!(parse_gpu_layers("[]").unwrap(), (0, vec![]));
        // 032 is cut right after the second "ID:".
        let (total, shares) =
            parse_gpu_layers("37[ID:GPU-d5703024-26e4-303b-8104-7d33cce0eeb1 Layers:20(0..19) ID:")
                .unwrap();
        assert_eq!((total, shares.len()), (37, 1));
    }
}
