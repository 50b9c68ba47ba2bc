//! What a scenario checks and counts: placement, tallies, statistics, and the audit of an
//! Ouroboros heap after each phase.

use super::harness::{Harness, TALLY_CORRUPTED, TALLY_FREE_FAILED};
use super::PhaseReport;
use gpu_heap::{Failures, HeapStats};
use gpu_heap::{GpuHeap, Strategy};

/// Collects failed checks and the counters of a scenario.
#[derive(Default)]
pub(super) struct Checks {
    pub(super) problems: Vec<String>,
    pub(super) corrupted: u64,
    pub(super) overlaps: u64,
    pub(super) operations: u64,
    pub(super) failures: Failures,
    pub(super) utilisation: Option<f64>,
    pub(super) utilisation_with_meta: Option<f64>,
    pub(super) burst_utilisation: Option<f64>,
    pub(super) ouroboros: Vec<PhaseReport>,
}

impl Checks {
    pub(super) fn expect(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            self.problems.push(what());
        }
    }

    pub(super) fn equal<T: PartialEq + std::fmt::Debug>(&mut self, what: &str, got: T, want: T) {
        self.expect(got == want, || {
            format!("{what}: got {got:?}, expected {want:?}")
        });
    }

    /// Adds a harness's verification tally and slot placement to the checks.
    /// Returns the tally and the number of live slots.
    pub(super) fn placement_and_tally(
        &mut self,
        h: &Harness,
        phase: &str,
    ) -> crate::Result<(Vec<u32>, u64)> {
        let tally = h.tally()?;
        let p = h.placement()?;
        self.corrupted += tally[TALLY_CORRUPTED] as u64;
        self.overlaps += p.overlaps;
        self.equal(
            &format!("{phase}: corrupted allocations"),
            tally[TALLY_CORRUPTED],
            0,
        );
        self.equal(&format!("{phase}: overlapping allocations"), p.overlaps, 0);
        self.equal(
            &format!("{phase}: allocations outside heap or segment"),
            p.misplaced,
            0,
        );
        self.equal(
            &format!("{phase}: frees not OK"),
            tally[TALLY_FREE_FAILED],
            0,
        );
        Ok((tally, p.live))
    }

    /// Ends a phase: adds the calls and failures of the harness's heap since they were
    /// last counted, and audits the heap.
    pub(super) fn finish(
        &mut self,
        h: &Harness,
        stats: &HeapStats,
        phase: &str,
    ) -> crate::Result<()> {
        let before = h.count(*stats);
        self.operations += stats.malloc_calls + stats.free_calls;
        self.operations -= before.malloc_calls + before.free_calls;
        self.failures += stats.failures.since(&before.failures);
        self.audit(&h.heap, phase)
    }

    /// Audits a heap between dispatches. Ouroboros: no page may be unaccounted for, no
    /// queue chunk unreachable, no linked queue stalled behind a finished chunk, no linked
    /// queue's search out of rounds (each is memory the heap has lost for good), and no
    /// chunk of a chunk-based heap's index out of its descents' reach.
    /// Tree buddy: every order's semaphore matches its available nodes, which descents
    /// can all reach, no batch or reservation is left behind, and the free leaves are the
    /// available blocks' leaves; contention failures are reported by cause. UAlloc: every
    /// class's semaphore matches its bins' free blocks, every bin's count its bitmap.
    pub(super) fn audit(&mut self, heap: &GpuHeap, phase: &str) -> crate::Result<()> {
        if let Some(report) = heap.tbuddy_report()? {
            for problem in report.inconsistencies() {
                self.problems
                    .push(format!("{phase}: tbuddy books: {problem}"));
            }
            if report.claim_failures + report.wait_failures + report.merge_failures > 0 {
                self.problems.push(format!(
                    "{phase}: tbuddy contention: {} blocks not found, {} waits ran out, {} sweeps ran out",
                    report.claim_failures, report.wait_failures, report.merge_failures
                ));
            }
        }
        if let Some(report) = heap.ualloc_report()? {
            for problem in report.inconsistencies() {
                self.problems
                    .push(format!("{phase}: ualloc books: {problem}"));
            }
            if report.claim_failures + report.wait_failures + report.bit_failures > 0 {
                self.problems.push(format!(
                    "{phase}: ualloc contention: {} bins not found, {} waits ran out, {} bits not found",
                    report.claim_failures, report.wait_failures, report.bit_failures
                ));
            }
        }
        if let Some(report) = heap.ouroboros_report()? {
            if let Some(u) = report.unaccounted_units() {
                self.equal(&format!("{phase}: page units unaccounted for"), u, 0);
            }
            if let Some(u) = report.unreachable_queue_chunks {
                self.equal(&format!("{phase}: unreachable queue chunks"), u, 0);
            }
            if let Some(u) = report.stalled_queue_chunks {
                self.equal(&format!("{phase}: queue chunks front cannot pass"), u, 0);
            }
            if let Some(u) = report.unreachable_index_chunks {
                self.equal(&format!("{phase}: indexed chunks no descent reaches"), u, 0);
            }
            // A linked queue's search that runs out leaves its position unfinished.
            self.equal(
                &format!("{phase}: queue searches that ran out"),
                report.enqueue_failures.search,
                0,
            );
            self.ouroboros.push(PhaseReport {
                phase: phase.to_string(),
                report,
            });
        }
        Ok(())
    }
}

/// After a free pass over every live slot: no free failed, no slot is left live, and the
/// live counters read exactly zero. Bump releases nothing on free: its counters must still
/// agree with each other, and read zero after the reset that gives its memory back.
pub(super) fn expect_all_freed(
    h: &Harness,
    strategy: Strategy,
    checks: &mut Checks,
    what: &str,
) -> crate::Result<()> {
    let (_, live) = checks.placement_and_tally(h, &format!("{what}, after free"))?;
    checks.equal(&format!("{what}: live slots after free"), live, 0);
    let stats = h.heap.stats()?;
    checks.finish(h, &stats, &format!("{what}, after free"))?;
    if !strategy.reuses_memory() {
        checks.expect(
            (stats.allocations_live == 0) == (stats.bytes_live == 0)
                && stats.allocations_live <= stats.malloc_calls,
            || format!("{what}: bump's live counters disagree: {stats:?}"),
        );
        h.reset()?;
    }
    if let Some(report) = h.heap.ualloc_report()? {
        // Every bin went back to the tree buddy or is an empty bin listed to go back (the
        // books say so), so that any size can have the heap again.
        checks.equal(
            &format!("{what}: ualloc bins in use after freeing all"),
            report.classes.iter().map(|c| c.bins).sum::<u64>() - report.empty_bins,
            0,
        );
    }
    let stats = h.heap.stats()?;
    checks.equal(
        &format!("{what}: live allocations and bytes after freeing all"),
        (stats.allocations_live, stats.bytes_live),
        (0, 0),
    );
    Ok(())
}
