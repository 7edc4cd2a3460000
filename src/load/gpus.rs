//! The GPUs of one load, merged from every inventory the log prints (Ollama's discovery, the runner's device
//! list, llama.cpp's `device_info`/`using device`, Ollama's `gpu memory` lines).

use crate::model::Gpu;
use crate::parse::event::{GpuInfo, RunnerDevice};

use super::builder::LoadBuilder;

impl LoadBuilder {
    /// The load's GPUs: the runner's devices enriched from discovery (by UUID, else by position when the
    /// names agree), else discovery's inventory, else llama.cpp's own device list; free memory from
    /// llama.cpp's inventory and Ollama's `gpu memory` lines.
    pub(super) fn gpus(&self) -> Vec<Gpu> {
        let to_gpu = gpu_from_info;
        let inventory: Vec<&(GpuInfo, u64)> = self
            .inventory
            .iter()
            .filter(|(g, _)| g.library.as_deref() != Some("cpu"))
            .collect();
        let whole_list = inventory.len() >= self.devices.len();
        let mut gpus: Vec<Gpu> = if self.devices.is_empty() {
            inventory.iter().map(|(g, l)| to_gpu(g, *l)).collect()
        } else {
            self.devices
                .iter()
                .enumerate()
                .map(|(position, (d, line))| {
                    let mut gpu = to_gpu(d, *line);
                    // Enrich from discovery: by UUID, else by position when the names agree and discovery
                    // listed at least as many GPUs as the runner has (a paste that starts inside discovery's
                    // list lacks its first GPUs, and the runner's `Device 0` is then not its first line).
                    let found = inventory
                        .iter()
                        .find(|(g, _)| d.id.is_some() && g.id == d.id)
                        .or_else(|| {
                            inventory
                                .get(position)
                                .filter(|(g, _)| g.name == d.name && whole_list)
                        })
                        // Ollama ≥ 0.12.4 gives the device's index as its id (`id=0`).
                        .or_else(|| {
                            let index = d.index?.to_string();
                            inventory
                                .iter()
                                .find(|(g, _)| g.id.as_deref() == Some(index.as_str()))
                        });
                    if let Some((g, _)) = found {
                        gpu.id = g.id.clone().unwrap_or(gpu.id);
                        gpu.library = g.library.clone();
                        gpu.driver = g.driver.clone();
                        gpu.variant = g.variant.clone();
                        gpu.total = g.total;
                        gpu.available = g.available;
                        gpu.bus_id = g.bus_id.clone().or(gpu.bus_id);
                        gpu.integrated = g.integrated;
                        if gpu.compute.is_none() {
                            gpu.compute = g.compute.clone();
                        }
                    }
                    gpu
                })
                .collect()
        };
        // llama.cpp's inventory of this load's GPUs: a base list when nothing else described them, else
        // free memory (and total) by position (`CUDA1` is the second).
        let runner_gpus: Vec<&(RunnerDevice, u64)> = self
            .runner_devices
            .iter()
            .filter(|(d, _)| d.device.is_gpu())
            .collect();
        if gpus.is_empty() {
            gpus = runner_gpus
                .iter()
                .map(|(d, line)| Gpu {
                    id: d
                        .device
                        .position()
                        .map(|p| p.to_string())
                        .unwrap_or_else(|| d.device.to_string()),
                    name: d.name.clone(),
                    total: d.total,
                    free: Some(d.free),
                    line: *line,
                    ..Gpu::default()
                })
                .collect();
        } else {
            for (d, _) in &runner_gpus {
                if let Some(gpu) = d.device.position().and_then(|p| gpus.get_mut(p)) {
                    gpu.free = gpu.free.or(Some(d.free));
                    gpu.total = gpu.total.or(d.total);
                }
            }
        }
        for (m, line) in &self.gpu_memory {
            // By id (a UUID, or the same index); Ollama >= 0.30 prints the index (`id=1`) where the runner's
            // device list has UUIDs: then by position.
            let by_id = gpus.iter().position(|g| Some(&g.id) == m.id.as_ref());
            let by_index =
                m.id.as_deref()
                    .and_then(|id| id.parse::<usize>().ok())
                    .filter(|&i| i < gpus.len());
            match by_id.or(by_index) {
                Some(i) => {
                    let gpu = &mut gpus[i];
                    gpu.available = m.available.or(gpu.available);
                    gpu.free = m.free.or(gpu.free);
                    gpu.library = gpu.library.clone().or(m.library.clone());
                }
                None => {
                    if let Some(id) = &m.id {
                        gpus.push(Gpu {
                            id: id.clone(),
                            library: m.library.clone(),
                            available: m.available,
                            free: m.free,
                            line: *line,
                            ..Gpu::default()
                        });
                    }
                }
            }
        }
        gpus
    }
}

/// A GPU description as the report shows it.
pub fn gpu_from_info(g: &GpuInfo, line: u64) -> Gpu {
    Gpu {
        id: g
            .id
            .clone()
            .or(g.index.map(|i| i.to_string()))
            .unwrap_or_default(),
        library: g.library.clone(),
        name: g.name.clone(),
        compute: g.compute.clone(),
        driver: g.driver.clone(),
        variant: g.variant.clone(),
        total: g.total,
        available: g.available,
        free: g.free,
        bus_id: g.bus_id.clone(),
        integrated: g.integrated,
        line,
    }
}

#[cfg(test)]
mod tests {
    use crate::load::loads_of;
    use crate::model::{Quantity, GIB, MIB};

    #[test]
    fn discovery_names_the_gpu_and_llama_cpp_gives_its_free_memory() {
        // `sample-logs/002-runpod-rtx4090-llama31-8b-lora.log:4,23,34`.
        let loads = loads_of(&[
            r#"time=2025-12-01T20:28:45.760Z level=INFO source=types.go:131 msg="inference compute" id=GPU-93e08bff-19ea-9448-3848-d2ab3d687e30 library=cuda variant=v12 compute=8.9 driver=12.4 name="NVIDIA GeForce RTX 4090" total="23.6 GiB" available="23.3 GiB""#,
            r#"time=2025-12-01T20:28:54.084Z level=INFO source=server.go:376 msg="starting llama server" cmd="/usr/lib/ollama/runners/cuda_v12_avx/ollama_llama_server runner --model /runpod-volume/blobs/sha256-667b0c1932bc6ffc593ed1d03f895bf2dc8dc6df21db3042284a6f4416b06a29 --ctx-size 8192 --batch-size 512 --n-gpu-layers 33 --lora /runpod-volume/blobs/sha256-27152a06f8a83c9b950a1c0e85c9cfc1ef8e52c9da9e1df6cd0dfa38184819c8 --threads 24 --parallel 4 --port 46753""#,
            "llama_load_model_from_file: using device CUDA0 (NVIDIA GeForce RTX 4090) - 23818 MiB free",
        ]);
        let gpus = &loads[0].gpus;
        assert_eq!(gpus.len(), 1);
        let g = &gpus[0];
        assert_eq!(g.id, "GPU-93e08bff-19ea-9448-3848-d2ab3d687e30");
        assert_eq!(g.name.as_deref(), Some("NVIDIA GeForce RTX 4090"));
        assert_eq!(g.compute.as_deref(), Some("8.9"));
        assert_eq!(
            g.available.map(|q| q.bytes),
            Some((23.3 * GIB as f64) as i64)
        );
        // llama.cpp prints whole MiB, truncated.
        assert_eq!(g.free, Quantity::from_truncated(23818, MIB));
    }

    #[test]
    fn gpu_memory_lines_alone_describe_the_gpus_by_index() {
        // `sample-logs/501-win-cuda-2gpu-3090-4060-gemma4-31b-start-excerpt.log:1,3,4` (Ollama 0.30+).
        let loads = loads_of(&[
            r#"time=2026-06-07T18:12:00.136+07:00 level=INFO source=llama_server.go:403 msg="starting llama-server" cmd="C:\\Users\\M\\AppData\\Local\\Programs\\Ollama\\lib\\ollama\\llama-server.exe --model C:\\Users\\M\\.ollama\\models\\blobs\\sha256-280af6832eca23cb322c4dcc65edfea98a21b8f8ab07dc7553bd6f7e6e7a3313 --port 51282 --host 127.0.0.1 --no-webui --offline -c 16384 -np 1 --log-verbosity 4 --no-log-prefix --no-log-timestamps --no-jinja --chat-template chatml --mmproj C:\\Users\\M\\.ollama\\models\\blobs\\sha256-280af6832eca23cb322c4dcc65edfea98a21b8f8ab07dc7553bd6f7e6e7a3313 --no-mmproj-offload --no-mmap --cache-type-k q8_0 --cache-type-v q8_0 --flash-attn on -b 1024 -ub 1024""#,
            r#"time=2026-06-07T18:12:00.142+07:00 level=INFO source=sched.go:620 msg="gpu memory" id=0 library=CUDA available="22.3 GiB" free="22.8 GiB" minimum="457.0 MiB" overhead="0 B""#,
            r#"time=2026-06-07T18:12:00.142+07:00 level=INFO source=sched.go:620 msg="gpu memory" id=1 library=CUDA available="6.5 GiB" free="6.9 GiB" minimum="457.0 MiB" overhead="0 B""#,
        ]);
        let gpus = &loads[0].gpus;
        let ids: Vec<&str> = gpus.iter().map(|g| g.id.as_str()).collect();
        assert_eq!(ids, ["0", "1"]);
        assert_eq!(gpus[1].library.as_deref(), Some("CUDA"));
        assert!(gpus[0].free.unwrap().bytes > gpus[0].available.unwrap().bytes);
    }
}
