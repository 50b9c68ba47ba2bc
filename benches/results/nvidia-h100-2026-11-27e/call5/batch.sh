# Call 5, on the machine of call 4 (still held): e's conformance at 1024 for the other virtualized Ouroboros variants.
gunzip -f .gpu/bin/*.gz; chmod +x .gpu/bin/*; source .gpu/env.sh >/dev/null 2>&1; o=$OUT/r; mkdir -p $o; E=.gpu/bin/gpu-heap-e
for s in ouro-p-va ouro-c-va ouro-c-vl; do st=$(date +%s); timeout 180 $E conformance --strategy $s --workgroups 1024 --json $o/conf-e-$s-1024.json > $o/conf-e-$s-1024.txt 2>&1; echo "$s rc $? $(( $(date +%s)-st )) s" >> $o/log.txt; done
cat $o/log.txt; grep -h pass $o/conf*.txt | cut -c1-100
