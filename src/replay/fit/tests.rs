//! The fit on hand-made inputs for each step of §5.5, on the corpus's real fits (042, 043), and its invariants
//! on random inputs.

use super::*;

fn device(name: &str, free_mib: i64, compute_mib: i64) -> FitDevice {
    FitDevice {
        name: name.into(),
        free: free_mib * MIB,
        target: DEFAULT_FIT_TARGET,
        compute: compute_mib * MIB,
    }
}

fn input(devices: Vec<FitDevice>, layers: Vec<FitLayer>, output: i64) -> FitInput {
    FitInput {
        devices,
        layers,
        output,
        n_gpu_layers: None,
        tensor_split: None,
        context: FitContext {
            configured: 8192,
            set_by_user: true,
            min: 4096,
        },
    }
}

/// `n` layers of `weights_mib` dense weights and `kv_mib` KV each.
fn dense(n: usize, weights_mib: i64, kv_mib: i64) -> Vec<FitLayer> {
    FitLayer::spread(n, n as i64 * weights_mib * MIB, 0, n as i64 * kv_mib * MIB)
}

/// Homes from runs: `(None, k)` k layers on the CPU, `(Some(d), k)` k layers on device d.
fn runs(parts: &[(Option<usize>, usize)]) -> Vec<Home> {
    parts
        .iter()
        .flat_map(|&(d, k)| {
            let home = match d {
                None => Home::Cpu,
                Some(index) => Home::Device {
                    index,
                    dense_only: false,
                },
            };
            std::iter::repeat_n(home, k)
        })
        .collect()
}

fn mib(free: &[i64]) -> Vec<f32> {
    free.iter().map(|&m| (m * MIB) as f32).collect()
}

// --- 1. The default split -------------------------------------------------------------------------

#[test]
fn default_split_two_gpus_is_proportional_to_free_memory() {
    // 23347 / (23347 + 7065) = 0.76769; layer il goes to CUDA0 while il / 61 < 0.76769, i.e. il ≤ 46
    // (46/61 = 0.7541, 47/61 = 0.7705). The output (il = 60, 60/61 = 0.98) is on CUDA1.
    let homes = default_split(&mib(&[23347, 7065]), 60, None);
    assert_eq!(homes, runs(&[(Some(0), 47), (Some(1), 14)]));
}

#[test]
fn default_split_three_gpus() {
    // Fractions 0.5, 0.8, 1.0 over 41 layers: il/41 < 0.5 → il ≤ 20; < 0.8 → il ≤ 32; the rest and the
    // output (il = 40) on CUDA2.
    let homes = default_split(&mib(&[10000, 6000, 4000]), 40, None);
    assert_eq!(homes, runs(&[(Some(0), 21), (Some(1), 12), (Some(2), 8)]));
}

#[test]
fn default_split_with_fewer_gpu_layers_than_layers_keeps_the_first_layers_and_the_output_on_the_cpu(
) {
    // -ngl 4 on 10 layers: i_gpu_start = 6, act = 4; layers 6..9 at 0, .25, .5, .75 against [0.5, 1]:
    // 6, 7 on CUDA0, 8, 9 on CUDA1 (0.5 is not strictly below 0.5); the output, 10 − 6 = 4 ≥ act, on the CPU.
    let homes = default_split(&mib(&[8000, 8000]), 10, Some(4));
    assert_eq!(
        homes,
        runs(&[(None, 6), (Some(0), 2), (Some(1), 2), (None, 1)])
    );
    // -ngl 10 = n_layer: every repeating layer on a GPU, the output still on the CPU ("offloaded 10/11").
    let homes = default_split(&mib(&[8000, 8000]), 10, Some(10));
    assert_eq!(homes, runs(&[(Some(0), 5), (Some(1), 5), (None, 1)]));
    // -ngl 11 = n_layer + 1 and Ollama's -ngl 999 place everything, like the default: il/11 < 0.5 → il ≤ 5.
    for ngl in [Some(11), Some(999), None] {
        let homes = default_split(&mib(&[8000, 8000]), 10, ngl);
        assert_eq!(homes, runs(&[(Some(0), 6), (Some(1), 5)]), "{ngl:?}");
    }
}

#[test]
fn default_split_one_device_and_none() {
    assert_eq!(
        default_split(&mib(&[7627]), 41, None),
        runs(&[(Some(0), 42)])
    );
    assert_eq!(default_split(&[], 41, None), runs(&[(None, 42)]));
    // Weights that add up to nothing split evenly instead of dividing by zero.
    assert_eq!(
        default_split(&[0.0, 0.0], 3, None),
        runs(&[(Some(0), 2), (Some(1), 2)])
    );
}

#[test]
fn a_tensor_split_replaces_free_memory_as_the_weights() {
    let mut i = input(
        vec![device("CUDA0", 20000, 500), device("CUDA1", 20000, 500)],
        dense(7, 100, 10),
        100 * MIB,
    );
    i.tensor_split = Some(vec![1.0, 3.0]);
    // il/8 < 0.25 → il ≤ 1 on CUDA0.
    assert_eq!(
        default_split(&i.split_weights(), 7, None),
        runs(&[(Some(0), 2), (Some(1), 6)])
    );
    i.tensor_split = Some(vec![0.0, 0.0]);
    assert!(!i.layers_forced(), "an all-zero split is no split");
}

// --- 2. No change needed (ollama#16599) -----------------------------------------------------------

/// 60 layers of 300 MiB weights + 40 MiB KV, a 700 MiB output, 500 MiB compute per device.
fn sixteen_five_ninety_nine(devices: Vec<FitDevice>) -> FitInput {
    input(devices, dense(60, 300, 40), 700 * MIB)
}

#[test]
fn a_model_one_gpu_holds_is_split_over_two_when_both_keep_their_margin() {
    let two = sixteen_five_ninety_nine(vec![
        device("CUDA0", 23347, 500),
        device("CUDA1", 7065, 500),
    ]);
    let out = fit(&two);
    assert_eq!(out.reason, FitReason::NoChangeNeeded);
    assert_eq!(
        out.used_devices(),
        2,
        "the default split keeps both devices"
    );
    assert_eq!(out.layers, default_split(&two.split_weights(), 60, None));
    // CUDA0: 47 × 340 + 500 = 16480 MiB, 6867 left; CUDA1: 13 × 340 + 700 + 500 = 5620 MiB, 1445 left.
    let (a, b) = (&out.devices[0], &out.devices[1]);
    assert_eq!(
        (a.layers, a.used, a.free_left),
        (47, 16480 * MIB, 6867 * MIB)
    );
    assert_eq!(
        (b.layers, b.used, b.free_left),
        (14, 5620 * MIB, 1445 * MIB)
    );
    assert!(b.holds_output && !a.holds_output);
    assert_eq!(
        (a.first, a.last, b.first, b.last),
        (Some(0), Some(46), Some(47), Some(60))
    );
    assert!(!a.over_target && !b.over_target);
    assert_eq!(out.initial, out.devices);

    // The same model on the 3090 alone: 60 × 340 + 700 + 500 = 21600 MiB, 1747 MiB left ≥ 1024. This is
    // what `needless-split` will state.
    let one = sixteen_five_ninety_nine(vec![device("CUDA0", 23347, 500)]);
    let alone = fit(&one);
    assert_eq!(alone.reason, FitReason::NoChangeNeeded);
    assert_eq!(alone.offloaded(), 61);
    assert_eq!(alone.devices[0].used, 21600 * MIB);
    assert_eq!(alone.devices[0].free_left, 1747 * MIB);
}

// --- 5. Fill back to front ---------------------------------------------------------------------

/// The fill's promises: every device within its budget, and one more layer would break it.
fn assert_filled_to_the_brim(i: &FitInput, out: &FitOutcome) {
    assert_eq!(out.reason, FitReason::Filled);
    let n = i.n_layer();
    for (d, (dev, got)) in i.devices.iter().zip(&out.devices).enumerate() {
        assert!(
            got.layers == 0 || got.used <= dev.budget(),
            "{} over budget",
            dev.name
        );
        // The layer this device would take next: just below the lowest layer of it and the later devices.
        let lowest = out.devices[d..]
            .iter()
            .filter_map(|g| g.first)
            .min()
            .unwrap_or(n + 1);
        if lowest > 0 {
            let compute = if got.layers == 0 { dev.compute } else { 0 };
            let more = got.used + layer_cost(i, lowest - 1, out.context, true) + compute;
            assert!(
                more > dev.budget(),
                "{} had room for layer {}",
                dev.name,
                lowest - 1
            );
        }
    }
}

#[test]
fn a_model_too_big_for_the_default_split_is_filled_back_to_front() {
    let i = sixteen_five_ninety_nine(vec![
        device("CUDA0", 12000, 500),
        device("CUDA1", 8000, 500),
    ]);
    let out = fit(&i);
    // The default split (il/61 < 0.6 → 37 layers on CUDA0: 37 × 340 + 500 = 13080 MiB) breaks CUDA0's
    // budget of 12000 − 1024 = 10976 MiB.
    assert!(out.initial[0].over_target);
    assert_filled_to_the_brim(&i, &out);
    // CUDA1 first (budget 6976 MiB): output + compute 1200, then 16 layers → 6640 MiB; a 17th makes 6980.
    let b = &out.devices[1];
    assert_eq!(
        (b.layers, b.first, b.last, b.used),
        (17, Some(44), Some(60), 6640 * MIB)
    );
    assert!(b.holds_output);
    // CUDA0 (budget 10976 MiB): compute 500 + 30 layers → 10700 MiB; a 31st makes 11040.
    let a = &out.devices[0];
    assert_eq!(
        (a.layers, a.first, a.last, a.used),
        (30, Some(14), Some(43), 10700 * MIB)
    );
    // The model's first 14 layers stay on the CPU.
    assert_eq!(out.cpu_layers, 14);
    assert!(out.layers[..14].iter().all(|h| *h == Home::Cpu));
    assert!(out.devices.iter().all(|d| !d.over_target));
}

#[test]
fn the_output_moves_to_the_previous_device_when_the_last_cannot_take_it() {
    // CUDA1's budget (1500 − 1024 = 476 MiB) is below output + compute (1200 MiB).
    let i = sixteen_five_ninety_nine(vec![
        device("CUDA0", 24000, 500),
        device("CUDA1", 1500, 500),
    ]);
    let out = fit(&i);
    assert_filled_to_the_brim(&i, &out);
    assert_eq!(out.devices[1].layers, 0);
    assert_eq!(out.devices[1].used, 0);
    assert!(out.devices[0].holds_output);
}

// --- 4. Forced ----------------------------------------------------------------------------------

#[test]
fn forced_gpu_layers_keep_the_default_split_over_budget() {
    let mut i = sixteen_five_ninety_nine(vec![
        device("CUDA0", 12000, 500),
        device("CUDA1", 8000, 500),
    ]);
    i.n_gpu_layers = Some(999); // Ollama with num_gpu set
    let out = fit(&i);
    assert_eq!(out.reason, FitReason::Forced);
    assert_eq!(out.layers, default_split(&i.split_weights(), 60, Some(999)));
    // CUDA0: 37 layers, 13080 MiB of 12000; CUDA1: 23 layers and the output, 9020 MiB of 8000. Both flagged.
    assert_eq!(out.devices[0].used, 13080 * MIB);
    assert_eq!(out.devices[1].used, 9020 * MIB);
    assert!(out.devices.iter().all(|d| d.over_target));

    i.n_gpu_layers = None;
    i.tensor_split = Some(vec![3.0, 2.0]);
    let out = fit(&i);
    assert_eq!(out.reason, FitReason::Forced);
    assert_eq!(out.layers, default_split(&[3.0, 2.0], 60, None));
}

// --- 3. Context -----------------------------------------------------------------------------------

/// One 8000 MiB device; 32 layers of 100 MiB weights + 150 MiB KV at 32768 tokens; output 200, compute 300.
fn long_context(set_by_user: bool, min: i64) -> FitInput {
    let mut i = input(
        vec![device("CUDA0", 8000, 300)],
        dense(32, 100, 150),
        200 * MIB,
    );
    i.context = FitContext {
        configured: 32768,
        set_by_user,
        min,
    };
    i
}

#[test]
fn the_context_is_reduced_when_the_user_did_not_set_it() {
    let out = fit(&long_context(false, 4096));
    // 3200 + 200 + 300 = 3700 MiB without KV; 6976 − 3700 = 3276 MiB for 4800 MiB × c / 32768:
    // c ≤ 22364, so 22272 (KV 3262.5 MiB, 6962.5 used); 22528 would need 3300.
    assert_eq!(out.reason, FitReason::ContextReduced);
    assert_eq!(
        (out.context, out.context_reduced_from),
        (22272, Some(32768))
    );
    assert_eq!(out.devices[0].used * 2, 13925 * MIB);
    assert_eq!(out.devices[0].layers, 33);
    assert!(out.initial[0].over_target && !out.devices[0].over_target);
}

#[test]
fn a_user_set_context_is_kept_and_layers_move_instead() {
    let i = long_context(true, 4096);
    let out = fit(&i);
    assert_eq!((out.context, out.context_reduced_from), (32768, None));
    assert_filled_to_the_brim(&i, &out);
    // (6976 − 500) / 250 = 25.9: 25 layers and the output on CUDA0, 7 on the CPU.
    assert_eq!((out.devices[0].layers, out.cpu_layers), (26, 7));
}

#[test]
fn when_the_minimum_context_is_not_enough_the_context_goes_to_it_and_layers_move() {
    let i = long_context(false, 30000);
    let out = fit(&i);
    assert_eq!(
        (out.context, out.context_reduced_from),
        (30000, Some(32768))
    );
    assert_filled_to_the_brim(&i, &out);
    assert!(out.cpu_layers > 0);
}

#[test]
fn on_several_devices_the_cut_keeps_half_a_layer_a_device_back_and_layers_move_after_it() {
    // Two devices of 8000 MiB (6976 each above the margin); 32 layers of 200 MiB weights and 300 MiB KV at
    // 32768 tokens, output 200, compute 300 each. Use: 7200 MiB + 9600 × c / 32768 — 16800 at 32768, 8400 at
    // the minimum 4096. llama.cpp aims at 13952 less (2 + 1) × 200 / 2 = 300 (a layer is (6400 + 200) / 33 =
    // 200 MiB of weights): 4096 + 28672 × (13652 − 8400) / (16800 − 8400) = 22022.6, so 22016 (without the
    // allowance 22784). Then it moves layers: at 22016 a layer is 401.6 MiB, and both devices hold theirs.
    let mut i = input(
        vec![device("CUDA0", 8000, 300), device("CUDA1", 8000, 300)],
        dense(32, 200, 300),
        200 * MIB,
    );
    i.context = FitContext {
        configured: 32768,
        set_by_user: false,
        min: 4096,
    };
    let out = fit(&i);
    assert_eq!(
        (out.reason, out.context, out.context_reduced_from),
        (FitReason::Filled, 22016, Some(32768))
    );
    assert_eq!(out.cpu_layers, 0);
    assert!(out.devices.iter().all(|d| !d.over_target));
}

// --- 6. MoE: corpus 043 ---------------------------------------------------------------------------

/// `raw/043-llama-server-fit-breakdown-laptop-moe.log`, one RTX 2000 Ada Laptop GPU, llama-server alone:
/// - line 2: `CUDA0 (…) |  7807 = 7627 + ( 5658 =  2542 +    2622 +     493) + …`: free 7627 MiB; with the
///   experts on the host, model 2542, context 2622, compute 493 MiB;
/// - line 3: `Host | 19891 = 19627 + 0 + 264`: the experts and the input embeddings;
/// - lines 5–7: `id=0, n_layer=42, n_part=41, …, mem=  5658 MiB`, `set ngl_per_device[0].n_layer=42`,
///   `- CUDA0 (…): 42 layers,   5658 MiB used,   1968 MiB free`: 42 layers = 41 repeating + the output
///   (n_part = 41: the output is never partial), all dense-only;
/// - line 10: all experts on the device, model 21654 MiB; line 11: host model 515 MiB (the embeddings).
///
/// Per-layer figures (the log has totals only, so the layers are taken as equal):
/// experts = (21654 − 2542) / 41 ≈ 466.1 MiB; KV = 2622 / 41; the output is taken as large as the input
/// embeddings left on the host (515 MiB, an assumption: the split between output and layers is not
/// printed), so dense = (2542 − 515) / 41 ≈ 49.4 MiB. The context is taken as user-set (not shown).
fn corpus_043() -> FitInput {
    input(
        vec![device("CUDA0", 7627, 493)],
        FitLayer::spread(41, (2542 - 515) * MIB, (21654 - 2542) * MIB, 2622 * MIB),
        515 * MIB,
    )
}

#[test]
fn corpus_043_moe_fills_dense_only_then_converts_what_the_margin_allows() {
    let i = corpus_043();
    let out = fit(&i);
    // All experts on the device would use 21654 + 2622 + 493 MiB: far over 7627.
    assert!(out.initial[0].over_target);
    assert_eq!(out.reason, FitReason::Filled);
    // The dense-only fill: 42 layers, 41 of them dense-only, ≈ 5658 MiB used, ≈ 1968 MiB free (the printed
    // figures are truncated MiB, and the table's parts add up to 5657).
    let dense = &out.dense_fill.as_ref().expect("a MoE fill")[0];
    assert_eq!((dense.layers, dense.dense_only), (42, 41));
    assert!((dense.used - 5658 * MIB).abs() < 2 * MIB, "{}", dense.used);
    assert!(
        (dense.free_left - 1968 * MIB).abs() < 3 * MIB,
        "{}",
        dense.free_left
    );
    // Then conversion: 1968 − 1024 ≈ 944 MiB above the target hold two layers' experts (932 MiB), not
    // three (1398 MiB). llama.cpp may also put part of a third layer's experts on the device.
    let d = &out.devices[0];
    assert_eq!((d.layers, d.dense_only), (42, 39));
    assert_eq!(
        &out.layers[..3],
        &[
            Home::Device {
                index: 0,
                dense_only: false
            },
            Home::Device {
                index: 0,
                dense_only: false
            },
            Home::Device {
                index: 0,
                dense_only: true
            },
        ]
    );
    assert!(d.used <= i.devices[0].budget() && !d.over_target);
    assert!(d.used + i.layers[2].experts > i.devices[0].budget());
}

// --- Corpus 042: two GPUs, the last one filled first ----------------------------------------------

/// `raw/042-llama-server-fit-breakdown-2gpu-5090-3090.log`, an excerpt of two probes of Ollama's
/// llama-server on an RTX 5090 (CUDA0) and an RTX 3090 (CUDA1):
/// - probe A, lines 2–4 and 6–8: CUDA0 `30991` MiB free, 0 layers, compute 4205 MiB; CUDA1 `23332` free,
///   16 layers, `17829 = 1177 + 15360 + 1292`; Host `1502 + 21504`; then `set ngl_per_device[1].n_layer=16`;
/// - probe B, lines 10–12: CUDA1 `21070 = 1346 + 18432 + 1292`; Host `1333 + 18432`.
///
/// The figures pin the model down: B has 3072 MiB more KV and 169 MiB more weights on CUDA1 than A, and
/// the KV totals (15360 + 21504 = 18432 + 18432 = 36864) are 36 × 1024, so the model has 36 repeating
/// layers of 1024 MiB KV (none in the output) and 169 / 3 ≈ 56.3 MiB of weights; A's 16 layers are the
/// output and 15 layers, B's 19 the output and 18; the output is 1177 − 15 × 56.3 = 332 MiB (the host's
/// input embeddings, 1502 − 21 × 56.3 ≈ 319 MiB, agree with B). A 36-layer model with 1024 MiB of f16 KV
/// per layer fits Qwen3-4B at 256k tokens. The context is user-set (Ollama always passes `-c`).
///
/// What cannot be reproduced, and why: the excerpt does not show the margin, the first projection or the
/// result line, and is cut after probe B. With these per-layer figures and the default 1024 MiB margin the
/// default split (22 layers on CUDA0, 27972 MiB; 15 on CUDA1, 16749 MiB) keeps both margins, so llama.cpp
/// would not have probed at all; and even a fill at 1024 MiB would end at 20 layers on CUDA1, since probe
/// B's 21070 MiB also fits its 22308 MiB. So the run's margin was larger than 1024 MiB (Ollama raises it
/// for a projector) or its first projection differed from these figures; the log cannot say which. Nor can
/// it say whether 16 was final: `set ngl_per_device[1].n_layer=16` is a step of llama.cpp's false-position
/// search, whose path depends on the no-layer and all-layer probes of CUDA1, not in the excerpt.
///
/// What the test checks: the per-layer figures give back both probes' CUDA1 totals; at 1024 MiB nothing
/// changes; and with a margin that makes the first projection fail and leaves 16 the answer (any margin in
/// 4423–5503 MiB does; 5 GiB here, chosen, not read from the log) the fill gives the last device (the
/// 3090, less free memory than the 5090) exactly probe A's 16 layers and 17829 MiB, before CUDA0.
fn corpus_042(margin_mib: i64) -> FitInput {
    let weights = 169 * MIB / 3;
    let layers = vec![
        FitLayer {
            dense: weights,
            experts: 0,
            kv: 1024 * MIB,
        };
        36
    ];
    let mut devices = vec![device("CUDA0", 30991, 4205), device("CUDA1", 23332, 1292)];
    for d in &mut devices {
        d.target = margin_mib * MIB;
    }
    input(devices, layers, 332 * MIB)
}

#[test]
fn corpus_042_the_last_device_is_filled_first_and_16_layers_fit_on_it() {
    let i = corpus_042(1024);
    // The probes' CUDA1 figures from the per-layer sizes (the output and the top 15 or 18 layers).
    let on_cuda1 = |k: usize| {
        let mut homes = vec![Home::Cpu; 37];
        for h in &mut homes[36 - k..] {
            *h = Home::Device {
                index: 1,
                dense_only: false,
            };
        }
        measure(&i, &homes, i.context.configured)[1].used
    };
    assert!((on_cuda1(15) - 17829 * MIB).abs() < MIB, "probe A");
    assert!((on_cuda1(18) - 21070 * MIB).abs() < MIB, "probe B");
    assert!(on_cuda1(15) <= i.devices[1].budget(), "16 layers fit CUDA1");

    // At the default margin the default split keeps both: no probe would have been printed.
    let out = fit(&i);
    assert_eq!(out.reason, FitReason::NoChangeNeeded);
    assert_eq!((out.devices[0].layers, out.devices[1].layers), (22, 15));

    // With a 5 GiB margin CUDA0's 3019 MiB left breaks it; CUDA1 is filled first: 16 layers, 17829 MiB.
    let i = corpus_042(5120);
    let out = fit(&i);
    assert!(out.initial[0].over_target && !out.initial[1].over_target);
    assert_filled_to_the_brim(&i, &out);
    let (a, b) = (&out.devices[0], &out.devices[1]);
    assert!(b.holds_output);
    assert_eq!((b.layers, b.first), (16, Some(21)));
    assert!((b.used - 17829 * MIB).abs() < MIB);
    // CUDA0 then takes 20 (4205 + 20 × 1080.3 = 25812 of 25871 MiB), and one layer stays on the CPU.
    assert_eq!((a.layers, a.first, a.last), (20, Some(1), Some(20)));
    assert_eq!(out.cpu_layers, 1);
}

// --- Properties ---------------------------------------------------------------------------------

/// splitmix64: a seeded generator, so a failure names its case and repeats.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    /// Up to `max_mib` MiB, with stray bytes.
    fn bytes(&mut self, max_mib: u64) -> i64 {
        (self.below(max_mib + 1) as i64) * MIB + self.below(MIB as u64) as i64
    }
}

fn random_input(rng: &mut Rng) -> FitInput {
    let nd = rng.below(4) as usize;
    let n = rng.below(80) as usize;
    let moe = rng.chance(30);
    let layers = (0..n)
        .map(|_| FitLayer {
            dense: rng.bytes(500),
            experts: if moe && rng.chance(90) {
                rng.bytes(1000)
            } else {
                0
            },
            kv: rng.bytes(200),
        })
        .collect();
    let devices = (0..nd)
        .map(|d| FitDevice {
            name: format!("CUDA{d}"),
            free: rng.bytes(24000),
            target: if rng.chance(70) {
                DEFAULT_FIT_TARGET
            } else {
                rng.bytes(3000)
            },
            compute: rng.bytes(1500),
        })
        .collect();
    let configured = 1 + rng.below(65536) as i64;
    FitInput {
        devices,
        layers,
        output: rng.bytes(1000),
        n_gpu_layers: rng.chance(20).then(|| rng.below(n as u64 + 3) as u32),
        tensor_split: rng
            .chance(10)
            .then(|| (0..nd).map(|_| rng.below(4) as f32).collect()),
        context: FitContext {
            configured,
            set_by_user: rng.chance(50),
            min: rng.below(configured as u64 + 1000) as i64,
        },
    }
}

fn check_invariants(i: &FitInput, out: &FitOutcome) {
    let n = i.n_layer();
    assert_eq!(out.layers.len(), n + 1);
    // Every layer exactly once: the devices' counts and the CPU's add up, and agree with the homes.
    let on_devices: usize = out.devices.iter().map(|d| d.layers).sum();
    assert_eq!(on_devices + out.cpu_layers, n + 1);
    for (index, d) in out.devices.iter().enumerate() {
        let mine: Vec<usize> = (0..=n)
            .filter(|&il| out.layers[il].device() == Some(index))
            .collect();
        assert_eq!(d.layers, mine.len());
        assert_eq!(
            (d.first, d.last),
            (mine.first().copied(), mine.last().copied())
        );
        // Contiguous: a device's layers form one range.
        if let (Some(f), Some(l)) = (d.first, d.last) {
            assert_eq!(l - f + 1, d.layers, "{} not contiguous", d.name);
        }
        assert_eq!(d.holds_output, out.layers[n].device() == Some(index));
        assert_eq!(d.free_left, d.free - d.used);
        assert_eq!(d.over_target, d.free_left < d.target);
        assert!(d.dense_only <= d.layers);
    }
    // Ordered: CPU first, then the devices in order; the output on the last device holding layers or on
    // the CPU.
    let key = |h: Home| h.device().map_or(-1, |d| d as i64);
    assert!(out.layers[..n].windows(2).all(|w| key(w[0]) <= key(w[1])));
    if let Some(d) = out.layers[n].device() {
        assert!(out.layers.iter().all(|h| key(*h) <= d as i64));
    }
    // Only MoE layers on a device are dense-only.
    for (il, h) in out.layers[..n].iter().enumerate() {
        if let Home::Device {
            dense_only: true, ..
        } = h
        {
            assert!(out.reason == FitReason::Filled && i.layers[il].experts > 0);
        }
    }
    // The context.
    let c = i.context;
    assert_eq!(
        out.context_reduced_from.is_some(),
        out.context < c.configured
    );
    if out.context_reduced_from.is_some() {
        assert!(!c.set_by_user);
        assert!(out.context >= c.min && (out.context % 256 == 0 || out.context == c.min));
    }
    let split = default_split(&i.split_weights(), n, i.n_gpu_layers);
    match out.reason {
        FitReason::NoChangeNeeded => {
            assert!(i.devices.is_empty() || keeps_targets(&out.devices));
            assert_eq!(out.layers, split);
            assert_eq!(out.context, c.configured);
        }
        FitReason::ContextReduced => {
            assert_eq!(i.devices.len(), 1);
            assert!(keeps_targets(&out.devices));
            assert_eq!(out.layers, split);
            // The largest such context: 256 more would break a margin.
            let more = (out.context / 256 + 1) * 256;
            if more < c.configured {
                assert!(!keeps_targets(&measure(i, &split, more)));
            }
        }
        FitReason::Forced => {
            assert!(i.layers_forced());
            assert_eq!(out.layers, split);
        }
        FitReason::Filled => {
            assert!(!i.layers_forced());
            // No device over its budget (one holding nothing may have a budget below zero).
            for (dev, got) in i.devices.iter().zip(&out.devices) {
                assert!(got.layers == 0 || got.used <= dev.budget());
                assert!(!got.over_target || got.layers == 0);
            }
            if i.is_moe() {
                // Converted layers come first on each device.
                for index in 0..i.devices.len() {
                    let flags: Vec<bool> = out.layers[..n]
                        .iter()
                        .enumerate()
                        .filter(|(il, h)| h.device() == Some(index) && i.layers[*il].experts > 0)
                        .map(|(_, h)| {
                            matches!(
                                h,
                                Home::Device {
                                    dense_only: true,
                                    ..
                                }
                            )
                        })
                        .collect();
                    assert!(flags.windows(2).all(|w| w[0] <= w[1]));
                }
            } else {
                assert_filled_to_the_brim(i, out);
            }
        }
    }
}

#[test]
fn invariants_hold_on_random_inputs() {
    let mut reasons = std::collections::BTreeMap::new();
    for seed in 0..600u64 {
        let mut rng = Rng(seed);
        let i = random_input(&mut rng);
        let out = fit(&i);
        let result = std::panic::catch_unwind(|| check_invariants(&i, &out));
        assert!(result.is_ok(), "seed {seed}: {i:?}\n{out:?}");
        *reasons.entry(format!("{:?}", out.reason)).or_insert(0) += 1;
    }
    // Every path is exercised.
    assert_eq!(reasons.len(), 4, "{reasons:?}");
}
