//! The model loader's default split (`llama_model::load_tensors`): layers over devices in proportion to their
//! free memory (or the user's tensor split), the first layers and the output on the CPU when `-ngl` says fewer.

use super::Home;

/// llama.cpp's default layer split (`llama_model::load_tensors`, `get_layer_buft_list`): step 1's placement and
/// the outcome whenever the fit changes no layer. Returns the home of each of the `n_layer + 1` layers.
///
/// `weights` has one entry per device: free memory by default, or the user's tensor split (see
/// [`super::FitInput::split_weights`]). Cumulative fractions `split[i] = Σ_{j≤i} w_j / Σ w` are computed in `f32` as
/// llama.cpp does. With `N` GPU layers (`None`: all), `i_gpu_start = max(n_layer − N, 0)` and
/// `act = min(N, n_layer + 1)`; layer `il` is on the CPU when `il < i_gpu_start` or
/// `il − i_gpu_start ≥ act`, else on the first device whose cumulative fraction is strictly greater than
/// `(il − i_gpu_start) / act` (`std::upper_bound`). The output layer is placed as layer `il = n_layer`: on the
/// last device holding layers when `N > n_layer`, on the CPU otherwise (`-ngl 32` on a 32-layer model offloads
/// 32 of 33 layers). With no device every layer is on the CPU.
pub fn default_split(weights: &[f32], n_layer: usize, n_gpu_layers: Option<u32>) -> Vec<Home> {
    let mut homes = vec![Home::Cpu; n_layer + 1];
    let nd = weights.len();
    if nd == 0 {
        return homes;
    }
    let all = n_layer as i64 + 1;
    let ngl = n_gpu_layers.map_or(all, i64::from);
    let i_gpu_start = (n_layer as i64 - ngl).max(0);
    let act = ngl.min(all);
    let split = cumulative_split(weights);
    for (il, home) in homes.iter_mut().enumerate() {
        let rel = il as i64 - i_gpu_start;
        if rel < 0 || rel >= act {
            continue;
        }
        let x = rel as f32 / act as f32;
        // upper_bound; a last fraction rounded below 1.0 could leave x past the end: clamp to the last device.
        let index = split.partition_point(|&s| s <= x).min(nd - 1);
        *home = Home::Device {
            index,
            dense_only: false,
        };
    }
    homes
}

/// Cumulative split fractions, `float` arithmetic as in `load_tensors` (sum, then divide by the total).
fn cumulative_split(weights: &[f32]) -> Vec<f32> {
    let clean: Vec<f32> = weights
        .iter()
        .map(|&w| if w.is_finite() && w > 0.0 { w } else { 0.0 })
        .collect();
    let even = clean.iter().all(|&w| w == 0.0);
    let mut sum = 0.0f32;
    let mut split: Vec<f32> = clean
        .iter()
        .map(|&w| {
            sum += if even { 1.0 } else { w };
            sum
        })
        .collect();
    for s in &mut split {
        *s /= sum;
    }
    split
}
