#!/bin/sh
# Reruns BLIS (github.com/inference-sim/inference-sim) on the six cases of
# TestLLMAgainstBLIS and prints its figures as blis-h100.json's cases.
#   usage: run-blis.sh BLIS_CHECKOUT BLIS_BINARY OUTDIR [roofline|trained-physics]
# BLIS is built outside this repository (see PROVENANCE.md); nothing of it is
# kept here but its figures and the requests it generated.
set -eu
src=$1 bin=$2 out=$3 lm=${4:-roofline}
mkdir -p "$out"
for c in 8b:1:28095:8 8b:1:28095:30 8b:1:28095:50 70b:4:30859:3 70b:4:30859:9 70b:4:30859:16; do
	IFS=: read -r m tp kv rate <<END
$c
END
	name=$m-r$rate
	cat >"$out/spec-$name.yaml" <<END
version: "1"
seed: 7
category: language
aggregate_rate: $rate
num_requests: 500
clients:
  - id: "chat"
    rate_fraction: 1.0
    streaming: true
    arrival: {process: poisson}
    input_distribution:  {type: gaussian, params: {mean: 512, std_dev: 256, min: 16, max: 2048}}
    output_distribution: {type: gaussian, params: {mean: 256, std_dev: 128, min: 16, max: 1024}}
END
	"$bin" run --model meta-llama/llama-3.1-$m-instruct --latency-model "$lm" --hardware H100 --tp "$tp" \
		--model-config-folder "$src/model_configs/llama-3.1-$m-instruct" --defaults-filepath "$src/defaults.yaml" \
		--hardware-config "$src/hardware_config.json" --workload-spec "$out/spec-$name.yaml" \
		--max-num-batched-tokens 2048 --max-num-seqs 256 --total-kv-blocks "$kv" \
		--trace-output "$out/trace-$name" --metrics-path "$out/metrics-$name.json" >"$out/stdout-$name.txt"
	# the three columns gpuplan reads
	awk -F, 'NR==1{for(i=1;i<=NF;i++)c[$i]=i; print "arrival_us,input_tokens,output_tokens"; next}
		{print $c["arrival_time_us"] "," $c["input_tokens"] "," $c["output_tokens"]}' \
		"$out/trace-$name.csv" >"$out/trace-$name.gpuplan.csv"
done
