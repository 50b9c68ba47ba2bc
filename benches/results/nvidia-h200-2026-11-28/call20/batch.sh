# next session's first call (prepared in the eighteenth; binaries in .gpu/bin, built at main 67f0af6): m12 = main at the session's end (the chunk-based Ouroboros fixes: dry rounds, filling from the start where a chunk is in sight, the logs' walkers pulling the hint back). Build: cargo build --release -p gpu-heap-cli && cargo test --release --no-run; strip -o .gpu/bin/gpu-heap-m12 target/release/gpu-heap; strip -o .gpu/bin/t-NAME target/release/deps/NAME-<hash> for lib (gpu_heap-*), ouroboros_refill, ouroboros_queue_chunks, ouroboros_mixed, ouroboros_saturated, ouroboros_vlq, tbuddy, ualloc, growth, random_walk, composition, bulk_semaphore, shader_errors; xz -9 .gpu/bin/*; move benches/results/* out of the tree while the call runs (the tree must stay under 64 MiB).
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 570 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
cold() { # name cmd... : a fresh HOME and no driver disk cache
  local n=$1; shift; local h=$(mktemp -d)
  local s=$(date +%s%N)
  HOME=$h XDG_CACHE_HOME=$h __GL_SHADER_DISK_CACHE=0 timeout 120 "$@" > $o/$n.txt 2>&1
  echo "$n: rc $? $(( ($(date +%s%N) - s) / 1000000 )) ms" >> $o/log.txt; save; }
for k in 1 2 3; do run t-refill-$k 90 .gpu/bin/t-ouroboros_refill --nocapture; run t-qchunks-$k 120 .gpu/bin/t-ouroboros_queue_chunks --nocapture; done
for t in lib shader_errors bulk_semaphore composition random_walk tbuddy ualloc growth ouroboros_vlq ouroboros_saturated ouroboros_mixed; do run t-$t 60 .gpu/bin/t-$t; done
run conf-ouro-c 200 .gpu/bin/gpu-heap-m12 conformance --strategy ouro-c-s,ouro-c-va --workgroups 1024 --json $o/conf-ouro-c.json
cat $o/log.txt; grep -h "test result\|panicked\|FAILED" $o/t-*.txt | head -40; grep -hE " (pass|FAIL) " $o/conf-*.txt | cut -c1-100
