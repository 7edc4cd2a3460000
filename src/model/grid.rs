//! The device × part grid of what a load's runner allocated: every buffer summed once, by device and by what it
//! holds. The reconcile stage builds it; the checks, the tables, the charts and the replay read it, so no later
//! stage sums buffers again.

use std::collections::BTreeMap;

use super::actual::{Buffer, BufferKind};
use super::device::Device;
use super::quantity::Quantity;

/// What a buffer holds, as the grid sorts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Part {
    /// Model weights (LoRA adapters included).
    Weights,
    /// KV cache.
    Kv,
    /// Recurrent state of hybrid models (RS buffers): fixed size, it does not grow with the context.
    State,
    /// Compute (graph) buffers of the text model.
    Graph,
    /// Output (logits) buffers.
    Output,
    /// Everything of the vision projector (clip's weights and compute).
    Projector,
}

impl Part {
    /// Every part, in display order.
    pub const ALL: [Part; 6] = [
        Part::Weights,
        Part::Kv,
        Part::State,
        Part::Graph,
        Part::Output,
        Part::Projector,
    ];

    /// The part a buffer belongs to.
    pub fn of(buffer: &Buffer) -> Part {
        if buffer.projector {
            return Part::Projector;
        }
        match buffer.kind {
            BufferKind::Model | BufferKind::Lora => Part::Weights,
            BufferKind::Kv => Part::Kv,
            BufferKind::Rs => Part::State,
            BufferKind::Compute => Part::Graph,
            BufferKind::Output => Part::Output,
        }
    }
}

/// The buffers of one device and part: their sum and the lines they were read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    pub size: Quantity,
    pub lines: Vec<u64>,
}

/// Per device and part, the sum of the runner's buffers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grid {
    cells: BTreeMap<(Device, Part), Cell>,
}

impl Grid {
    /// Sum a load's buffers by device and part.
    pub fn of(buffers: &[Buffer]) -> Grid {
        let mut cells: BTreeMap<(Device, Part), Cell> = BTreeMap::new();
        for b in buffers {
            let cell = cells
                .entry((b.device.clone(), Part::of(b)))
                .or_insert(Cell {
                    size: Quantity::exact(0),
                    lines: Vec::new(),
                });
            cell.size = cell.size.plus(b.size);
            cell.lines.push(b.line);
        }
        Grid { cells }
    }

    /// One device's buffers of one part.
    pub fn cell(&self, device: &Device, part: Part) -> Option<&Cell> {
        self.cells.get(&(device.clone(), part))
    }

    /// One device's buffers of one part, in bytes (0 when there are none).
    pub fn bytes(&self, device: &Device, part: Part) -> i64 {
        self.cell(device, part).map_or(0, |c| c.size.bytes)
    }

    /// The devices holding buffers, in display order (GPUs, then the host).
    pub fn devices(&self) -> Vec<&Device> {
        let mut devices: Vec<&Device> = self.cells.keys().map(|(d, _)| d).collect();
        devices.dedup();
        devices
    }

    /// The GPUs holding buffers, in display order.
    pub fn gpus(&self) -> Vec<&Device> {
        self.devices().into_iter().filter(|d| d.is_gpu()).collect()
    }

    /// The GPUs holding the model's own weights (the projector's excepted).
    pub fn gpus_with_weights(&self) -> Vec<&Device> {
        self.cells
            .iter()
            .filter(|((d, part), c)| d.is_gpu() && *part == Part::Weights && c.size.bytes > 0)
            .map(|((d, _), _)| d)
            .collect()
    }

    /// The sum of `parts` over every GPU, and the lines it rests on.
    pub fn gpus_total(&self, parts: &[Part]) -> Option<Cell> {
        sum(self
            .cells
            .iter()
            .filter(|((d, part), _)| d.is_gpu() && parts.contains(part))
            .map(|(_, c)| c))
    }

    /// The sum of `parts` on one device.
    pub fn on(&self, device: &Device, parts: &[Part]) -> Option<Cell> {
        sum(self
            .cells
            .iter()
            .filter(|((d, part), _)| d == device && parts.contains(part))
            .map(|(_, c)| c))
    }

    /// The sum of `parts` over every device, the host included.
    pub fn total(&self, parts: &[Part]) -> Option<Cell> {
        sum(self
            .cells
            .iter()
            .filter(|((_, part), _)| parts.contains(part))
            .map(|(_, c)| c))
    }

    /// The first GPU holding buffers of `part`, and their sum.
    pub fn first_gpu_with(&self, part: Part) -> Option<(&Device, &Cell)> {
        self.cells
            .iter()
            .find(|((d, p), _)| d.is_gpu() && *p == part)
            .map(|((d, _), c)| (d, c))
    }
}

fn sum<'a>(cells: impl Iterator<Item = &'a Cell>) -> Option<Cell> {
    cells.fold(None, |acc: Option<Cell>, c| {
        Some(match acc {
            None => c.clone(),
            Some(mut a) => {
                a.size = a.size.plus(c.size);
                a.lines.extend(&c.lines);
                a
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MIB;

    fn buffer(name: &str, kind: BufferKind, mib: i64, projector: bool, line: u64) -> Buffer {
        let device = Device::of_buffer(name);
        Buffer {
            host: device.is_host(),
            device,
            buffer: name.to_string(),
            kind,
            size: Quantity::exact(mib * MIB),
            line,
            component: "load_tensors".to_string(),
            projector,
            superseded: Vec::new(),
        }
    }

    #[test]
    fn buffers_are_summed_once_by_device_and_part() {
        // The founding case of today: two KV caches on each GPU add up; clip's CPU compute is the projector's.
        let grid = Grid::of(&[
            buffer("CUDA0", BufferKind::Model, 11750, false, 70),
            buffer("CUDA0", BufferKind::Kv, 476, false, 85),
            buffer("CUDA0", BufferKind::Kv, 340, false, 89),
            buffer("CUDA1", BufferKind::Model, 4352, false, 71),
            buffer("CUDA_Host", BufferKind::Compute, 42, false, 95),
            buffer("CPU", BufferKind::Compute, 58, true, 115),
        ]);
        let cuda0 = Device::named("CUDA0");
        assert_eq!(grid.bytes(&cuda0, Part::Kv), 816 * MIB);
        assert_eq!(grid.cell(&cuda0, Part::Kv).unwrap().lines, vec![85, 89]);
        assert_eq!(grid.bytes(&Device::Host, Part::Graph), 42 * MIB);
        assert_eq!(grid.bytes(&Device::Host, Part::Projector), 58 * MIB);
        assert_eq!(grid.gpus_with_weights().len(), 2);
        assert_eq!(
            grid.gpus_total(&[Part::Weights]).unwrap().size.bytes,
            (11750 + 4352) * MIB
        );
        let devices: Vec<String> = grid.devices().iter().map(|d| d.to_string()).collect();
        assert_eq!(devices, ["CUDA0", "CUDA1", "CPU"]);
    }
}
