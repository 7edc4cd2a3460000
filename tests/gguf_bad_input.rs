//! Hostile and broken GGUF headers: one test per kind of damage, each with a clear error naming the byte
//! offset, never a panic nor an allocation the file cannot back; then random mutations and every truncation of
//! a real fixture (written by llama.cpp's `gguf` package).

use proptest::prelude::*;

use vramdiff::gguf::{self, GgufErrorKind};

/// A GGUF file built by hand: version, metadata (key, type, value bytes), tensor infos (name, dims, type,
/// offset), then the aligned data section of `data` bytes.
struct Builder {
    version: u32,
    kvs: Vec<(String, u32, Vec<u8>)>,
    tensors: Vec<(String, Vec<u64>, u32, u64)>,
    data: u64,
    tensor_count: Option<u64>,
    kv_count: Option<u64>,
}

fn string(s: &str) -> Vec<u8> {
    let mut b = (s.len() as u64).to_le_bytes().to_vec();
    b.extend_from_slice(s.as_bytes());
    b
}

impl Builder {
    fn new() -> Builder {
        Builder {
            version: 3,
            kvs: vec![("general.architecture".into(), 8, string("llama"))],
            tensors: Vec::new(),
            data: 0,
            tensor_count: None,
            kv_count: None,
        }
    }

    fn kv(mut self, key: &str, t: u32, value: Vec<u8>) -> Builder {
        self.kvs.push((key.into(), t, value));
        self
    }

    /// An F32 tensor of `n` elements at `offset`.
    fn f32(mut self, name: &str, n: u64, offset: u64) -> Builder {
        self.tensors.push((name.into(), vec![n], 0, offset));
        self
    }

    fn data(mut self, n: u64) -> Builder {
        self.data = n;
        self
    }

    /// The bytes, and the offset of each tensor info.
    fn build(&self) -> (Vec<u8>, Vec<u64>) {
        let mut b = b"GGUF".to_vec();
        b.extend(self.version.to_le_bytes());
        b.extend(
            self.tensor_count
                .unwrap_or(self.tensors.len() as u64)
                .to_le_bytes(),
        );
        b.extend(self.kv_count.unwrap_or(self.kvs.len() as u64).to_le_bytes());
        for (k, t, v) in &self.kvs {
            b.extend(string(k));
            b.extend(t.to_le_bytes());
            b.extend(v);
        }
        let mut infos = Vec::new();
        for (name, dims, t, offset) in &self.tensors {
            infos.push(b.len() as u64);
            b.extend(string(name));
            b.extend((dims.len() as u32).to_le_bytes());
            for d in dims {
                b.extend(d.to_le_bytes());
            }
            b.extend(t.to_le_bytes());
            b.extend(offset.to_le_bytes());
        }
        while !b.len().is_multiple_of(32) {
            b.push(0);
        }
        b.extend(vec![0u8; self.data as usize]);
        (b, infos)
    }

    fn bytes(&self) -> Vec<u8> {
        self.build().0
    }
}

fn read(bytes: &[u8]) -> Result<gguf::GgufHeader, gguf::GgufError> {
    gguf::read_header_bytes(bytes, "hostile.gguf")
}

fn error(bytes: &[u8]) -> gguf::GgufError {
    let e = read(bytes).expect_err("a hostile header is refused");
    let text = e.to_string();
    assert!(
        text.starts_with(&format!("hostile.gguf: at byte {}: ", e.offset)),
        "{text}"
    );
    e
}

#[test]
fn a_well_formed_hand_built_file_reads() {
    let h = read(
        &Builder::new()
            .f32("a", 8, 0)
            .f32("b", 8, 32)
            .data(64)
            .bytes(),
    )
    .unwrap();
    assert_eq!(h.tensors.len(), 2);
    assert_eq!(h.tensors[0].bytes, 32);
    assert_eq!(h.tensors[1].bytes, 32);
}

#[test]
fn a_bad_magic() {
    let mut b = Builder::new().bytes();
    b[..4].copy_from_slice(b"GGML");
    let e = error(&b);
    assert_eq!(e.offset, 0);
    assert_eq!(e.kind, GgufErrorKind::BadMagic("GGML".into()));
    assert!(matches!(error(b"").kind, GgufErrorKind::BadMagic(_)));
}

#[test]
fn an_unsupported_version() {
    let mut builder = Builder::new();
    builder.version = 1;
    let e = error(&builder.bytes());
    assert_eq!(
        (e.offset, e.kind),
        (4, GgufErrorKind::UnsupportedVersion(1))
    );
    // A big-endian file: version 3 byte-swapped.
    builder.version = 3u32.swap_bytes();
    assert_eq!(
        error(&builder.bytes()).kind,
        GgufErrorKind::UnsupportedVersion(50331648)
    );
}

#[test]
fn counts_past_the_end_of_the_file() {
    let mut builder = Builder::new();
    builder.kv_count = Some(u64::MAX);
    let e = error(&builder.bytes());
    assert_eq!(e.offset, 16);
    assert!(matches!(e.kind, GgufErrorKind::CountPastEnd { .. }), "{e}");
    let mut builder = Builder::new();
    builder.tensor_count = Some(1 << 40);
    let e = error(&builder.bytes());
    assert_eq!(e.offset, 8);
    assert!(matches!(e.kind, GgufErrorKind::CountPastEnd { .. }), "{e}");
}

#[test]
fn a_string_length_past_the_end() {
    let mut value = (1u64 << 50).to_le_bytes().to_vec();
    value.extend(b"short");
    let (b, _) = Builder::new().kv("general.name", 8, value).build();
    let e = error(&b);
    assert!(
        matches!(
            e.kind,
            GgufErrorKind::CountPastEnd {
                what: "a string length",
                ..
            }
        ),
        "{e}"
    );
    // The length field's own offset: after the header, the first entry, the key and the type.
    let first = 24 + string("general.architecture").len() + 4 + string("llama").len();
    assert_eq!(e.offset as usize, first + string("general.name").len() + 4);
}

#[test]
fn an_absurd_array_size() {
    let mut value = 4u32.to_le_bytes().to_vec();
    value.extend(u64::MAX.to_le_bytes());
    value.extend([0; 64]);
    let e = error(&Builder::new().kv("x.arr", 9, value).bytes());
    assert!(
        matches!(
            e.kind,
            GgufErrorKind::CountPastEnd {
                what: "an array length",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn arrays_nested_too_deep() {
    let mut value = Vec::new();
    for _ in 0..100 {
        value.extend(9u32.to_le_bytes());
        value.extend(1u64.to_le_bytes());
    }
    let e = error(&Builder::new().kv("x.deep", 9, value).bytes());
    assert_eq!(
        e.kind,
        GgufErrorKind::NestingTooDeep(gguf::value::MAX_NESTING)
    );
}

#[test]
fn an_unknown_value_type() {
    let e = error(&Builder::new().kv("x.t", 42, vec![0; 8]).bytes());
    assert_eq!(e.kind, GgufErrorKind::UnknownValueType(42));
}

#[test]
fn a_bool_that_is_neither_0_nor_1() {
    let e = error(&Builder::new().kv("x.flag", 7, vec![7]).bytes());
    assert!(
        matches!(&e.kind, GgufErrorKind::BadMetadata { key, .. } if key == "x.flag"),
        "{e}"
    );
}

#[test]
fn a_key_or_a_tensor_name_twice() {
    let b = Builder::new()
        .kv("general.architecture", 8, string("gemma3"))
        .bytes();
    let e = error(&b);
    assert!(
        matches!(&e.kind, GgufErrorKind::BadMetadata { key, problem } if key == "general.architecture" && problem.contains("twice")),
        "{e}"
    );
    assert_eq!(
        e.offset as usize,
        24 + string("general.architecture").len() + 4 + string("llama").len()
    );
    let (b, infos) = Builder::new()
        .f32("a", 8, 0)
        .f32("a", 8, 32)
        .data(64)
        .build();
    let e = error(&b);
    assert_eq!(e.offset, infos[1]);
    assert!(e.to_string().contains("the name appears twice"), "{e}");
}

#[test]
fn a_truncated_file() {
    let b = Builder::new().f32("a", 8, 0).data(32).bytes();
    // Inside the tensor info, and inside the tensor's data.
    let e = error(&b[..b.len() - 40]);
    assert!(matches!(e.kind, GgufErrorKind::Truncated { .. }), "{e}");
    let e = error(&b[..b.len() - 1]);
    assert!(
        matches!(&e.kind, GgufErrorKind::BadTensor { problem, .. } if problem.contains("past the end")),
        "{e}"
    );
}

#[test]
fn tensor_offsets_out_of_order() {
    let (b, infos) = Builder::new()
        .f32("a", 8, 32)
        .f32("b", 8, 0)
        .data(64)
        .build();
    let e = error(&b);
    assert_eq!(e.offset, infos[0]);
    assert!(e.to_string().contains("must be in file order"), "{e}");
}

#[test]
fn overlapping_tensors() {
    // 16 f32 elements are 64 bytes; the next tensor starts 32 bytes later.
    let (b, infos) = Builder::new()
        .f32("a", 16, 0)
        .f32("b", 8, 32)
        .data(96)
        .build();
    let e = error(&b);
    assert_eq!(e.offset, infos[0]);
    assert!(e.to_string().contains("overlap the next tensor"), "{e}");
}

#[test]
fn a_tensor_past_the_end() {
    let (b, infos) = Builder::new()
        .f32("a", 8, 0)
        .f32("b", 8, 1 << 40)
        .data(64)
        .build();
    let e = error(&b);
    assert_eq!(e.offset, infos[1]);
    assert!(e.to_string().contains("past the end of the file"), "{e}");
}

#[test]
fn a_misaligned_offset() {
    let (b, infos) = Builder::new()
        .f32("a", 1, 0)
        .f32("b", 1, 4)
        .data(64)
        .build();
    let e = error(&b);
    assert_eq!(e.offset, infos[1]);
    assert!(
        e.to_string().contains("not a multiple of the alignment 32"),
        "{e}"
    );
}

#[test]
fn too_many_dimensions_or_an_overflowing_shape() {
    let mut builder = Builder::new().data(32);
    builder.tensors.push(("a".into(), vec![1; 5], 0, 0));
    assert!(error(&builder.bytes()).to_string().contains("5 dimensions"));
    let mut builder = Builder::new().data(32);
    builder.tensors.push(("a".into(), vec![u64::MAX, 2], 0, 0));
    assert!(error(&builder.bytes()).to_string().contains("overflows"));
}

#[test]
fn an_alignment_that_is_not_a_power_of_two() {
    let e = error(
        &Builder::new()
            .kv("general.alignment", 4, 48u32.to_le_bytes().to_vec())
            .bytes(),
    );
    assert!(
        matches!(&e.kind, GgufErrorKind::BadMetadata { key, .. } if key == "general.alignment"),
        "{e}"
    );
}

#[test]
fn an_absurd_block_count_is_refused_by_the_layout() {
    let b = Builder::new()
        .kv("llama.block_count", 10, (1u64 << 40).to_le_bytes().to_vec())
        .bytes();
    let header = read(&b).unwrap();
    let e = gguf::layout::build(&header, None).unwrap_err();
    assert!(
        matches!(
            e.kind,
            GgufErrorKind::TooLarge {
                what: "a layer count",
                ..
            }
        ),
        "{e}"
    );
    // So is a layer index from a tensor name, up to the largest u64.
    let b = Builder::new()
        .f32("blk.18446744073709551615.x", 1, 0)
        .data(32)
        .bytes();
    let e = gguf::layout::build(&read(&b).unwrap(), None).unwrap_err();
    assert!(
        matches!(
            e.kind,
            GgufErrorKind::TooLarge {
                what: "a layer count",
                ..
            }
        ),
        "{e}"
    );
    assert!(e.offset > 0, "{e}");
    // Hostile head counts saturate instead of overflowing.
    let b = Builder::new()
        .kv("llama.block_count", 4, 2u32.to_le_bytes().to_vec())
        .kv(
            "llama.attention.head_count_kv",
            10,
            u64::MAX.to_le_bytes().to_vec(),
        )
        .kv(
            "llama.attention.key_length",
            10,
            u64::MAX.to_le_bytes().to_vec(),
        )
        .bytes();
    let layout = gguf::layout::build(&read(&b).unwrap(), None).unwrap();
    assert_eq!(layout.layers.len(), 2);
}

fn llama_fixture() -> Vec<u8> {
    std::fs::read(crate::util::root().join("tests/data/gguf/llama-tiny.gguf")).unwrap()
}

#[test]
fn every_truncation_of_a_real_fixture_is_an_error() {
    let bytes = llama_fixture();
    let full = read(&bytes).unwrap();
    // Every cut inside the header, then every 97th in the data section.
    let cuts =
        (0..full.data_start as usize).chain((full.data_start as usize..bytes.len()).step_by(97));
    for cut in cuts {
        let e = read(&bytes[..cut]).expect_err("a cut file is refused");
        assert!(
            e.offset <= cut as u64 || matches!(e.kind, GgufErrorKind::BadTensor { .. }),
            "{cut}: {e}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_headers_never_panic(flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        let mut bytes = llama_fixture();
        // Bytes inside the header (metadata and tensor infos), where a change means something.
        let header = read(&bytes).unwrap().data_start as usize;
        for (at, value) in flips {
            bytes[at.index(header)] = value;
        }
        if let Ok(header) = read(&bytes) {
            let _ = gguf::layout::build(&header, None);
        }
    }

    #[test]
    fn random_bytes_after_the_magic_never_panic(tail in prop::collection::vec(any::<u8>(), 0..512)) {
        let mut bytes = b"GGUF\x03\0\0\0".to_vec();
        bytes.extend(tail);
        if let Ok(header) = read(&bytes) {
            let _ = gguf::layout::build(&header, None);
        }
    }
}
