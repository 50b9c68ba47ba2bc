# Call 3, on the machine of call 2 (still held): x's scale at 8192 workgroups, then its bench again.
gunzip -f .gpu/bin/*.gz; chmod +x .gpu/bin/*; source .gpu/env.sh >/dev/null 2>&1; o=$OUT/r; mkdir -p $o; X=.gpu/bin/gpu-heap-x
s=$(date +%s); timeout 250 $X conformance --strategy ualloc --scenario scale --workgroups 8192 --json $o/conf-x-scale-8192.json > $o/conf-x-scale-8192.txt 2>&1; echo "scale rc $? $(( $(date +%s)-s )) s" | tee $o/log.txt
s=$(date +%s); timeout 80 $X bench --strategy bump,ualloc --test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1 --json $o/bench-x2.json > $o/bench-x2.txt 2>&1; echo "bench rc $? $(( $(date +%s)-s )) s" | tee -a $o/log.txt
grep -h pass $o/conf*.txt
