//! llama.cpp's `--fit` layer placement as a pure function of the devices' free memory and the model's per-layer
//! sizes: where llama-server (and Ollama ≥ 0.30, which starts it) puts each layer. See `docs/log-formats.md`
//! §5.5; the steps below are numbered as there.
//!
//! Why it exists: since Ollama 0.30 the placement is no longer Ollama's estimator (`placement.rs`) but llama.cpp's
//! `common_params_fit_impl` (`common/fit.cpp`) on top of the model loader's default split
//! (`llama_model::load_tensors`, its `get_layer_buft_list`). Replaying it answers "would it have fit?" and
//! "why was it split?": in ollama#16599 a model that one RTX 3090 holds is spread over the 3090 and a small
//! 4060, because the default split is proportional to free memory, both devices keep their margin, and so the
//! fit changes nothing. The module knows nothing of logs; the caller turns parsed figures into a [`FitInput`].
//!
//! Conventions:
//! - Sizes are bytes (`i64`), as everywhere in vramdiff.
//! - Layers are counted as llama.cpp counts them: the `n_layer` repeating layers (indices `0..n_layer`) **plus
//!   the output layer** (index `n_layer`), so a model has `n_layer + 1` layers, as in `offloaded 37/37 layers
//!   to GPU`, `- CUDA0 (…): 42 layers` and `ngl_per_device[K].n_layer`. The input embeddings always stay on the
//!   CPU and are not modelled.
//! - Devices are in llama.cpp's order (`CUDA0`, `CUDA1`, …); a device is referred to by its position there.
//!
//! Where §5.5 is silent or this replay simplifies (each point is repeated where it applies). Details of
//! llama.cpp beyond §5.5 (the loader's split, the `-ngl` arithmetic, how the context cut is estimated) are from
//! our reading of its code, not from a log: check them against the llama.cpp build a log comes from.
//! - The output layer counts as a layer: a device holding only the output pays its compute buffer.
//! - A device holding no layer pays nothing (no compute buffer). Real probes disagree: corpus 042 line 6
//!   (`id=0, n_layer= 0, … mem=  4205 MiB`) and 044 line 35 (`n_layer= 0, … mem=   498 MiB`) show a compute
//!   buffer on a device without layers (llama.cpp runs large matrix products of host weights on the GPU). This
//!   understates `used` for a device without layers (and could pass step 2 for one that is really over its
//!   margin); it does not change where the fill puts layers, since a device's first layer brings its compute.
//! - KV scales linearly with the context; the compute buffer is taken as independent of it.
//! - Context reduction is llama.cpp's (b11549, §5.5 step 3): when the devices together miss their margins, a
//!   linear interpolation between the use at the minimum context and at the configured one, towards the sum of
//!   the devices' free memory less their margins (less `(devices + 1)` halves of a layer's weights, sixths for a
//!   MoE, with several devices), rounded down to 256. On one device that is the largest multiple of 256 keeping
//!   the margin (memory is affine in the context here) and the fit ends; on several it goes on to move layers at
//!   the reduced context. A device over its margin while the devices together are not gets no reduction.
//! - MoE: experts are converted onto a device per whole layer, in place, on the device that holds the layer
//!   (llama.cpp may move full layers forward across devices and lets one partially converted layer per device
//!   overflow); conversion happens only when the dense-only fill put every layer on a device (llama.cpp
//!   converts only with a surplus after placing all dense weights).
//! - Negative sizes are read as 0; non-positive or non-finite split weights as 0, and all-zero weights as an
//!   even split (llama.cpp would divide by zero).

mod input;
mod outcome;
mod split;
#[cfg(test)]
mod tests;

pub use input::*;
pub use outcome::*;
pub use split::default_split;

const MIB: i64 = 1024 * 1024;

/// llama.cpp rounds a reduced context down to a multiple of this ("round down context for CUDA backend").
const CONTEXT_STEP: i64 = 256;

/// Replay llama.cpp's `--fit` (`common_params_fit_impl`, §5.5) on `input`.
///
/// 1. Place with the default split ([`default_split`]) at the configured context and measure each device.
/// 2. If every device keeps its margin (`free − used ≥ target`): [`FitReason::NoChangeNeeded`].
/// 3. If the user did not set the context, reduce it (KV linear in the context) to the largest multiple of 256,
///    not below the minimum, with which the default split keeps every margin; if that suffices:
///    [`FitReason::ContextReduced`]. If even the minimum does not suffice the context goes to the minimum and
///    the fit goes on.
/// 4. With `-ngl` or a tensor split the fit stops: [`FitReason::Forced`], default split, devices flagged.
/// 5. Otherwise fill back to front ([`FitReason::Filled`]): from the last device to the first, each takes the
///    most not-yet-placed top layers (the output layer first) that fit in `free − target`; the rest stay on the
///    CPU.
/// 6. MoE: step 5 with every layer's experts in system memory, then, front to back over the devices, each
///    device's dense-only layers become full layers from its first layer on while its budget allows.
pub fn fit(input: &FitInput) -> FitOutcome {
    let n_layer = input.n_layer();
    let configured = input.context.configured;
    // 1. The user's settings.
    let split = default_split(&input.split_weights(), n_layer, input.n_gpu_layers);
    let initial = measure(input, &split, configured);
    let outcome = |reason, layers: Vec<Home>, context, reduced_from, dense_fill| {
        let devices = measure(input, &layers, context);
        FitOutcome {
            reason,
            devices,
            cpu_layers: layers.iter().filter(|h| **h == Home::Cpu).count(),
            layers,
            context,
            context_reduced_from: reduced_from,
            initial: initial.clone(),
            dense_fill,
        }
    };
    // 2. Nothing to do (llama.cpp also stops when there is no device with memory of its own).
    if input.devices.is_empty() || keeps_targets(&initial) {
        return outcome(FitReason::NoChangeNeeded, split, configured, None, None);
    }
    // 3. The context, when the user left it to llama.cpp and the devices together miss their margins.
    let mut context = configured;
    let mut reduced_from = None;
    let surplus: i64 = initial
        .iter()
        .map(|d| d.free_left.saturating_sub(d.target))
        .sum();
    if !input.context.set_by_user && input.context.min < configured && surplus < 0 {
        context = reduced_context(input, &split);
        reduced_from = Some(configured);
        // One device: the cut is the answer, unless even the minimum misses the margin. Several: llama.cpp
        // goes on to move layers at the reduced context.
        if input.devices.len() == 1 && keeps_targets(&measure(input, &split, context)) {
            return outcome(
                FitReason::ContextReduced,
                split,
                context,
                reduced_from,
                None,
            );
        }
    }
    // 4. The user fixed the layers.
    if input.layers_forced() {
        return outcome(FitReason::Forced, split, context, reduced_from, None);
    }
    // 5. and 6.
    let moe = input.is_moe();
    let mut layers = fill_back_to_front(input, context, moe);
    let dense_fill = moe.then(|| measure(input, &layers, context));
    if moe && !layers.contains(&Home::Cpu) {
        convert_front_to_back(input, context, &mut layers);
    }
    outcome(FitReason::Filled, layers, context, reduced_from, dense_fill)
}

fn keeps_targets(devices: &[DeviceFit]) -> bool {
    devices.iter().all(|d| !d.over_target)
}

/// KV of `kv` bytes measured at `configured` tokens, at `context` tokens.
fn kv_at(kv: i64, context: i64, configured: i64) -> i64 {
    let kv = kv.max(0);
    if configured <= 0 || context == configured {
        return kv;
    }
    let scaled = i128::from(kv) * i128::from(context.max(0)) / i128::from(configured);
    i64::try_from(scaled).unwrap_or(i64::MAX)
}

/// Bytes layer `il` puts on its device (`il == n_layer`: the output layer).
fn layer_cost(input: &FitInput, il: usize, context: i64, experts_on_device: bool) -> i64 {
    match input.layers.get(il) {
        None => input.output.max(0),
        Some(l) => {
            let experts = if experts_on_device {
                l.experts.max(0)
            } else {
                0
            };
            l.dense.max(0).saturating_add(experts).saturating_add(kv_at(
                l.kv,
                context,
                input.context.configured,
            ))
        }
    }
}

/// Each device's share of a placement at `context`.
fn measure(input: &FitInput, layers: &[Home], context: i64) -> Vec<DeviceFit> {
    let n_layer = input.n_layer();
    let mut devices: Vec<DeviceFit> = input
        .devices
        .iter()
        .map(|d| DeviceFit {
            name: d.name.clone(),
            layers: 0,
            dense_only: 0,
            first: None,
            last: None,
            holds_output: false,
            used: 0,
            free: d.free,
            free_left: d.free,
            target: d.target,
            over_target: false,
        })
        .collect();
    for (il, home) in layers.iter().enumerate() {
        let Home::Device { index, dense_only } = *home else {
            continue;
        };
        let d = &mut devices[index];
        d.used = d
            .used
            .saturating_add(layer_cost(input, il, context, !dense_only));
        d.layers += 1;
        d.first.get_or_insert(il);
        d.last = Some(il);
        if il == n_layer {
            d.holds_output = true;
        } else if dense_only {
            d.dense_only += 1;
        }
    }
    for (d, device) in devices.iter_mut().zip(&input.devices) {
        if d.layers > 0 {
            d.used = d.used.saturating_add(device.compute.max(0));
        }
        d.free_left = d.free.saturating_sub(d.used);
        d.over_target = d.free_left < d.target;
    }
    devices
}

/// Step 3, as llama.cpp computes it: the use of every device together at the minimum context and at the
/// configured one, and the context between them at which it meets the devices' free memory less their margins
/// (less an allowance for whole layers with several devices), rounded down to 256, never below the minimum.
fn reduced_context(input: &FitInput, split: &[Home]) -> i64 {
    let (min, max) = (input.context.min.max(0), input.context.configured);
    let used = |context: i64| -> i64 {
        measure(input, split, context)
            .iter()
            .fold(0i64, |sum, d| sum.saturating_add(d.used))
    };
    let mut target: i64 = input
        .devices
        .iter()
        .fold(0i64, |sum, d| sum.saturating_add(d.budget()));
    if input.devices.len() > 1 {
        // "only whole layers can be assigned to devices … on average we expect a waste of 0.5 layers (1/3 of a
        // MoE layer's tensors) per device".
        let on_devices: Vec<usize> = (0..split.len())
            .filter(|&il| split[il].device().is_some())
            .collect();
        let model: i64 = on_devices
            .iter()
            .map(|&il| match input.layers.get(il) {
                Some(l) => l.dense.max(0).saturating_add(l.experts.max(0)),
                None => input.output.max(0),
            })
            .sum();
        let per_layer = model / (on_devices.len().max(1) as i64);
        let share = if input.is_moe() { 6 } else { 2 };
        target = target.saturating_sub((input.devices.len() as i64 + 1) * per_layer / share);
    }
    let (at_min, at_max) = (used(min), used(max));
    if target <= at_min || at_max <= at_min {
        return min;
    }
    let cut = i128::from(max - min) * i128::from(target - at_min) / i128::from(at_max - at_min);
    let context = min
        .saturating_add(i64::try_from(cut).unwrap_or(i64::MAX))
        .min(max);
    (context - context.rem_euclid(CONTEXT_STEP)).max(min)
}

/// Step 5 (and 6's first half with `experts_on_host`): from the last device to the first, give each device the
/// most of the remaining top layers that fit in its budget. The cost only grows with the count, so taking layers
/// while they fit gives the largest count, the one llama.cpp's false-position search converges on.
fn fill_back_to_front(input: &FitInput, context: i64, experts_on_host: bool) -> Vec<Home> {
    let n_layer = input.n_layer();
    let mut layers = vec![Home::Cpu; n_layer + 1];
    // Layers 0..next are not placed yet; the next to place is next − 1 (the output layer first).
    let mut next = n_layer + 1;
    for (index, device) in input.devices.iter().enumerate().rev() {
        let budget = device.budget();
        let mut used = 0i64;
        let mut taken = 0usize;
        while next > 0 {
            let il = next - 1;
            // The first layer a device takes brings its compute buffer.
            let compute = if taken == 0 { device.compute.max(0) } else { 0 };
            let cost = layer_cost(input, il, context, !experts_on_host).saturating_add(compute);
            if used.saturating_add(cost) > budget {
                break;
            }
            used = used.saturating_add(cost);
            let dense_only = experts_on_host && input.layers.get(il).is_some_and(|l| l.experts > 0);
            layers[il] = Home::Device { index, dense_only };
            taken += 1;
            next -= 1;
        }
    }
    layers
}

/// Step 6's second half: front to back over the devices, convert each device's dense-only layers into full
/// layers from its first layer on, one whole layer at a time, until the next one's experts do not fit.
fn convert_front_to_back(input: &FitInput, context: i64, layers: &mut [Home]) {
    let mut used: Vec<i64> = measure(input, layers, context)
        .iter()
        .map(|d| d.used)
        .collect();
    for (index, device) in input.devices.iter().enumerate() {
        let budget = device.budget();
        for (il, home) in layers.iter_mut().enumerate() {
            if *home
                != (Home::Device {
                    index,
                    dense_only: true,
                })
            {
                continue;
            }
            let experts = input.layers[il].experts.max(0);
            if used[index].saturating_add(experts) > budget {
                break;
            }
            used[index] += experts;
            *home = Home::Device {
                index,
                dense_only: false,
            };
        }
    }
}
