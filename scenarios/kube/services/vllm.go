package services

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"gpuplan.dev/gpuplan/validate/strict"
)

// VLLM is what a replica's vLLM server is started with: the engine
// arguments of `vllm serve MODEL ...` (or `python -m
// vllm.entrypoints.openai.api_server --model MODEL ...`) in a container's
// command and args. A nil field was not given (vLLM's default holds).
type VLLM struct {
	// Container is the container's name; HFModel the model as given (a
	// Hugging Face id or a path); Model gpuplan's catalog name for it
	// ("" when it names no catalog model: the scenario's llm.model must).
	Container, HFModel, Model string
	TensorParallel            *int
	// PipelineParallel is --pipeline-parallel-size: the engine's pipeline
	// stages (a LeaderWorkerSet's across its group's nodes, or in one pod).
	PipelineParallel                *int
	MaxNumSeqs, MaxNumBatchedTokens *int
	MaxModelLen, BlockSize          *int
	GPUMemoryUtilization            *float64
	// Notes are the arguments read but not modelled, and what each was
	// taken as.
	Notes []string
}

// vllmTakesNoValue are vLLM's boolean flags among those read or noted.
var vllmTakesNoValue = map[string]bool{
	"--enable-prefix-caching": true, "--no-enable-prefix-caching": true, "--enable-chunked-prefill": true,
	"--no-enable-chunked-prefill": true, "--trust-remote-code": true, "--disable-log-requests": true,
	"--disable-log-stats": true, "--enforce-eager": true, "--enable-lora": true, "--enable-auto-tool-choice": true,
	"--disable-custom-all-reduce": true, "--enable-expert-parallel": true, "--no-enable-log-requests": true,
	"--enable-log-requests": true, "--disable-frontend-multiprocessing": true, "--headless": true,
}

// vllmValued are the arguments gpuplan reads a value of.
var vllmValued = map[string]bool{"--model": true, "--tensor-parallel-size": true, "-tp": true, "--max-num-seqs": true,
	"--max-num-batched-tokens": true, "--max-model-len": true, "--block-size": true, "--gpu-memory-utilization": true,
	"--pipeline-parallel-size": true, "-pp": true, "--data-parallel-size": true, "-dp": true, "--quantization": true,
	"-q": true, "--kv-cache-dtype": true, "--dtype": true}

// isFlag reports an argument that is a flag, not a value (a negative
// number is a value).
func isFlag(a string) bool {
	if !strings.HasPrefix(a, "-") {
		return false
	}
	_, err := strconv.ParseFloat(a, 64)
	return err != nil
}

// vllmNoEffect are arguments that do not change what the engine model
// computes (serving, naming and logging).
var vllmNoEffect = map[string]bool{
	"--host": true, "--port": true, "--served-model-name": true, "--trust-remote-code": true, "--download-dir": true,
	"--disable-log-requests": true, "--disable-log-stats": true, "--api-key": true, "--uvicorn-log-level": true,
	"--tokenizer": true, "--revision": true, "--tokenizer-mode": true, "--chat-template": true, "--seed": true,
	"--enable-auto-tool-choice": true, "--tool-call-parser": true, "--no-enable-log-requests": true,
	"--enable-log-requests": true, "--max-log-len": true, "--root-path": true, "--disable-frontend-multiprocessing": true,
	"--response-role": true, "--ssl-keyfile": true, "--ssl-certfile": true, "--load-format": true,
	// A multi-node engine's ranks (LeaderWorkerSet): the group's pods.
	"--nnodes": true, "--node-rank": true, "--master-addr": true, "--master-port": true, "--headless": true,
	"--distributed-executor-backend": true,
}

// vllmOf finds the container of tpl that runs vLLM (nil when none does)
// and reads its engine arguments; at is the pod spec's path.
func vllmOf(file string, line int, pos strict.Positions, at string, cs []corev1.Container, group int) (*VLLM, error) {
	for i, c := range cs {
		argv, field, err := vllmArgv(c)
		if err != nil {
			return nil, strict.At(file, line, pos, fmt.Sprintf("%s.containers[%d].command", at, i), "%v", err)
		}
		if argv == nil {
			continue
		}
		field = fmt.Sprintf("%s.containers[%d].%s", at, i, field)
		v, err := parseVLLM(argv, group)
		if err != nil {
			return nil, strict.At(file, line, pos, field, "%v", err)
		}
		v.Container = c.Name
		return v, nil
	}
	return nil, nil
}

// vllmArgv is the container's vLLM argument list after the model server's
// entry point (nil when it runs no vLLM server) and the field it is in.
// A shell's -c script is split on blanks and quotes.
func vllmArgv(c corev1.Container) ([]string, string, error) {
	all := append(append([]string(nil), c.Command...), c.Args...)
	field := "args"
	if len(c.Args) == 0 {
		field = "command"
	}
	for k := 0; k+1 < len(all); k++ {
		if (all[k] == "-c" || all[k] == "-lc") && strings.Contains(all[k+1], "vllm") {
			words, err := shellWords(all[k+1])
			if err != nil {
				return nil, field, err
			}
			all = words
			break
		}
	}
	for k, w := range all {
		switch {
		case (w == "vllm" || strings.HasSuffix(w, "/vllm")) && k+1 < len(all) && all[k+1] == "serve":
			return all[k+2:], field, nil
		case w == "vllm.entrypoints.openai.api_server":
			return all[k+1:], field, nil
		}
	}
	// The vllm/vllm-openai image's entry point is the API server: its
	// args are the engine's.
	if len(c.Command) == 0 && strings.Contains(c.Image, "vllm-openai") {
		return append([]string{}, c.Args...), "args", nil
	}
	return nil, field, nil
}

// shellWords splits a shell command line on blanks, honouring single and
// double quotes; a variable or command substitution is refused (its value
// is not known here).
func shellWords(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == '$' || r == '`':
			return nil, fmt.Errorf("the vLLM command line uses a shell variable or substitution (%s); give the engine arguments as values", strict.Quote(s))
		case r == ' ' || r == '\t' || r == '\n' || r == '\\' || r == ';' || r == '&':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out, nil
}

// parseVLLM reads `vllm serve`'s arguments for a replica of group pods
// (0 or 1: one pod).
func parseVLLM(argv []string, group int) (*VLLM, error) {
	v := &VLLM{}
	var unknown []string
	for k := 0; k < len(argv); k++ {
		a := argv[k]
		if !strings.HasPrefix(a, "-") {
			if v.HFModel == "" {
				v.HFModel = a
				continue
			}
			return nil, fmt.Errorf("%s: a second positional argument after the model %s", strict.Quote(a), strict.Quote(v.HFModel))
		}
		name, val, hasVal := strings.Cut(a, "=")
		name = strings.ReplaceAll(name, "_", "-")
		if !hasVal && !vllmTakesNoValue[name] {
			// A flag followed by another (or by nothing) takes no value
			// (a boolean flag gpuplan does not list); one gpuplan reads
			// a value of must have it.
			if k+1 >= len(argv) || isFlag(argv[k+1]) {
				if vllmValued[name] {
					return nil, fmt.Errorf("%s has no value", name)
				}
			} else {
				k++
				val = argv[k]
			}
		}
		intArg := func(dst **int, lo int) error {
			n, err := strconv.Atoi(val)
			if err != nil || n < lo {
				return fmt.Errorf("%s %s is not a whole number of at least %d", name, strict.Quote(val), lo)
			}
			*dst = &n
			return nil
		}
		var err error
		switch name {
		case "--model":
			v.HFModel = val
		case "--tensor-parallel-size", "-tp":
			err = intArg(&v.TensorParallel, 1)
		case "--max-num-seqs":
			err = intArg(&v.MaxNumSeqs, 1)
		case "--max-num-batched-tokens":
			err = intArg(&v.MaxNumBatchedTokens, 1)
		case "--max-model-len":
			err = intArg(&v.MaxModelLen, 1)
		case "--block-size":
			err = intArg(&v.BlockSize, 1)
		case "--gpu-memory-utilization":
			f, perr := strconv.ParseFloat(val, 64)
			if perr != nil || !(f > 0 && f <= 1) {
				err = fmt.Errorf("%s %s is not in (0, 1]", name, strict.Quote(val))
			}
			v.GPUMemoryUtilization = &f
		case "--pipeline-parallel-size", "-pp":
			err = intArg(&v.PipelineParallel, 1)
		case "--data-parallel-size", "-dp":
			var n *int
			if err = intArg(&n, 1); err == nil && *n > 1 {
				err = fmt.Errorf("%s %d: pipeline and data parallel replicas are not modelled (a replica is one tensor-parallel engine); model it with tensorParallel or as more replicas", name, *n)
			}
		case "--quantization", "-q", "--kv-cache-dtype", "--dtype":
			if val != "auto" && val != "bfloat16" && val != "bf16" && val != "float16" && val != "half" {
				v.Notes = append(v.Notes, fmt.Sprintf("vLLM %s %s: not modelled, weights and KV cache taken as 16-bit", name, val))
			}
		case "--enable-chunked-prefill":
			// vLLM V1 chunks prefills always, as the engine model does.
		case "--no-enable-chunked-prefill":
			v.Notes = append(v.Notes, fmt.Sprintf("vLLM %s: not modelled, prefills are chunked to the step's token budget (vLLM V1's way)", name))
		case "--enable-prefix-caching":
			v.Notes = append(v.Notes, fmt.Sprintf("vLLM %s: the cluster run caches prefixes where llm.prefix says what the prompts share; without it every prompt is prefilled whole", name))
		case "--no-enable-prefix-caching":
			// As the cluster run's fast model: no prefix cache.
		case "--enforce-eager", "--speculative-config", "--enable-lora", "--max-loras", "--swap-space", "--cpu-offload-gb",
			"--disable-custom-all-reduce", "--enable-expert-parallel", "--num-scheduler-steps", "--scheduling-policy":
			v.Notes = append(v.Notes, fmt.Sprintf("vLLM %s: not modelled", strings.TrimSpace(name+" "+val)))
		default:
			if !vllmNoEffect[name] {
				unknown = append(unknown, name)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if v.HFModel == "" {
		return nil, fmt.Errorf("the vLLM server names no model (vllm serve MODEL or --model)")
	}
	v.Model = catalogModel(v.HFModel)
	if v.Model == "" {
		v.Notes = append(v.Notes, fmt.Sprintf("vLLM model %s is not in gpuplan's catalog (llama-3-8b, llama-3-70b): llm.model must name the one of the same shape", strict.Quote(v.HFModel)))
	} else if isLlama3Base(v.HFModel) && v.MaxModelLen == nil {
		// Llama 3 (not 3.1 or 3.3) has an 8,192-token context, vLLM's
		// default max-model-len for it.
		n := 8192
		v.MaxModelLen = &n
	}
	if len(unknown) > 0 {
		v.Notes = append(v.Notes, fmt.Sprintf("vLLM arguments not read: %s", strings.Join(unknown, ", ")))
	}
	return v, nil
}

// catalogModel is the catalog's name for a Hugging Face Llama 3, 3.1 or
// 3.3 id of 8B or 70B parameters ("" for any other model).
func catalogModel(hf string) string {
	s := strings.ToLower(hf[strings.LastIndex(hf, "/")+1:])
	if !strings.Contains(s, "llama-3") {
		return ""
	}
	switch {
	case strings.Contains(s, "-8b"):
		return "llama-3-8b"
	case strings.Contains(s, "-70b"):
		return "llama-3-70b"
	}
	return ""
}

// isLlama3Base reports a Llama 3 id that is not 3.1 or later.
func isLlama3Base(hf string) bool {
	s := strings.ToLower(hf[strings.LastIndex(hf, "/")+1:])
	return strings.Contains(s, "llama-3-") && !strings.Contains(s, "llama-3.")
}
