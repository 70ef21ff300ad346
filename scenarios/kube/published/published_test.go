package published_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/kube/services"
	"gpuplan.dev/gpuplan/scenarios/kube/workloads"
	"gpuplan.dev/gpuplan/validate/strict"
)

// What gpuplan makes of a file.
const (
	// loads: every slot's reader reads the file.
	loads = "loads"
	// fileErr: refused, and the API server (kubectl apply's default
	// strict field validation, the CRD's schema) or the project's
	// webhook refuses it too.
	fileErr = "refused: the file's error"
	// gap: refused, though the API server and webhook accept it: a kind
	// or field gpuplan does not read (yet).
	gap = "refused: not read"
	// notInput: no object a scenario reads (RBAC, storage, an admission
	// policy, kind's cluster config, a ConfigMap of code): refused as a
	// workload ("no workload in the file"), as the articles' table says
	// "not an input".
	notInput = "not an input"
)

// The slots a file's kinds are given in (README: the scenario's fields).
const (
	slotPolicy   = "policy"   // spec.policy.manifests
	slotWorkload = "workload" // spec.workload.manifests[].path
	slotService  = "service"  // spec.workload.services[].manifests
)

// minimalCQ is a ClusterQueue of Kueue's examples: a file of
// ResourceFlavors or AdmissionChecks alone is no policy (gpuplan wants a
// queue or NodePool), so it is given beside this one, as a user lists
// several files in policy.manifests.
const minimalCQ = "kueue/site/static/examples/admin/minimal-cq.yaml"

type row struct {
	file string
	// slots: the slots the file's kinds are given in, joined by "+"
	// ("" for none: it is given as a workload).
	slots   string
	outcome string
	// beside: a file given with it in the policy slot.
	beside string
	// folder: given as its folder in the workload slot (the path names
	// the folder), as the TrainJobs of trainer/examples/flux are with the
	// runtime of flux-runtime.yaml beside them.
	folder bool
	// want: words of the refusal, its line:column: field first; for a
	// file given in no slot, the kinds the workload reader skips.
	want []string
	// why: the refusal in the report's words.
	why string
}

var table = []row{
	{file: "karpenter-provider-aws/examples/v1/100-cpu-limit.yaml", slots: "policy", outcome: loads},
	{file: "karpenter-provider-aws/examples/v1/al2-custom-ami.yaml", slots: "policy", outcome: loads},
	{file: "karpenter-provider-aws/examples/v1/al2-custom-userdata.yaml", slots: "policy", outcome: loads},
	{file: "karpenter-provider-aws/examples/v1/al2-kubelet-log-query.yaml", slots: "policy", outcome: loads},
	{file: "karpenter-provider-aws/examples/v1/al2023-custom-userdata.yaml", slots: "policy", outcome: loads},
	{file: "karpenter-provider-aws/examples/v1/bottlerocket.yaml", slots: "policy", outcome: loads},
	{file: "karpenter-provider-aws/examples/v1/br-custom-userdata.yaml", slots: "policy", outcome: loads},
	{file: "karpenter-provider-aws/examples/v1/custom-family-with-alias.yaml", slots: "policy", outcome: loads},
	{file: "karpenter-provider-aws/examples/v1/custom-family.yaml", slots: "policy", outcome: loads},
	{file: "karpenter-provider-aws/examples/v1/general-purpose.yaml", slots: "policy", outcome: loads},
	{file: "karpenter-provider-aws/examples/v1/instance-store-ephemeral-storage.yaml", slots: "policy", outcome: loads},
	{file: "karpenter-provider-aws/examples/v1/large-instances.yaml", slots: "policy", outcome: loads},
	{file: "karpenter-provider-aws/examples/v1/max-node-lifetime.yaml", slots: "policy", outcome: loads},
	{file: "karpenter-provider-aws/examples/v1/min-values-family.yaml", slots: "policy", outcome: loads},
	{file: "karpenter-provider-aws/examples/v1/min-values-multiple-keys.yaml", slots: "policy", outcome: loads},
	{file: "karpenter-provider-aws/examples/v1/multiple-arch.yaml", slots: "policy", outcome: loads},
	{file: "karpenter-provider-aws/examples/v1/multiple-ebs.yaml", slots: "policy", outcome: loads},
	{file: "karpenter-provider-aws/examples/v1/spot.yaml", slots: "policy", outcome: loads},
	{file: "karpenter-provider-aws/examples/v1/windows-2019.yaml", slots: "policy", outcome: gap, want: []string{"13:11: spec.template.spec.requirements[0]:", "kubernetes.io/os In [windows] leaves no instance type"}, why: "Windows nodes: the embedded AWS catalog has Linux instance types only"},
	{file: "karpenter-provider-aws/examples/v1/windows-2022.yaml", slots: "policy", outcome: gap, want: []string{"13:11: spec.template.spec.requirements[0]:", "kubernetes.io/os In [windows] leaves no instance type"}, why: "Windows nodes: the embedded AWS catalog has Linux instance types only"},
	{file: "karpenter-provider-aws/examples/v1/windows-2025.yaml", slots: "policy", outcome: gap, want: []string{"13:11: spec.template.spec.requirements[0]:", "kubernetes.io/os In [windows] leaves no instance type"}, why: "Windows nodes: the embedded AWS catalog has Linux instance types only"},
	{file: "karpenter-provider-aws/examples/v1/windows-custom-userdata.yaml", slots: "policy", outcome: fileErr, want: []string{"32:16: spec.template.spec.nodeClassRef.group:", "should match '^[^/]*$'"}, why: "nodeClassRef.group is an apiVersion (karpenter.k8s.aws/v1); the NodePool CRD's pattern ^[^/]*$ refuses it"},
	{file: "karpenter-provider-aws/examples/workloads/arm64.yaml", slots: "service", outcome: fileErr, want: []string{"27:11: spec.template.spec.containers[0].securityContext.allowPrivilegedEscalation:", "did you mean \"allowPrivilegeEscalation\""}, why: "misspelt allowPrivilegeEscalation: an unknown field, refused by kubectl apply's default strict field validation"},
	{file: "karpenter-provider-aws/examples/workloads/disruption-budget.yaml", slots: "service", outcome: fileErr, want: []string{"37:11: spec.template.spec.containers[0].securityContext.allowPrivilegedEscalation:", "did you mean \"allowPrivilegeEscalation\""}, why: "misspelt allowPrivilegeEscalation: an unknown field, refused by kubectl apply's default strict field validation"},
	{file: "karpenter-provider-aws/examples/workloads/gpu-amd.yaml", slots: "service", outcome: fileErr, want: []string{"29:11: spec.template.spec.containers[0].securityContext.allowPrivilegedEscalation:", "did you mean \"allowPrivilegeEscalation\""}, why: "misspelt allowPrivilegeEscalation: an unknown field, refused by kubectl apply's default strict field validation"},
	{file: "karpenter-provider-aws/examples/workloads/gpu-nvidia.yaml", slots: "service", outcome: fileErr, want: []string{"29:11: spec.template.spec.containers[0].securityContext.allowPrivilegedEscalation:", "did you mean \"allowPrivilegeEscalation\""}, why: "misspelt allowPrivilegeEscalation: an unknown field, refused by kubectl apply's default strict field validation"},
	{file: "karpenter-provider-aws/examples/workloads/inflate.yaml", slots: "service", outcome: loads},
	{file: "karpenter-provider-aws/examples/workloads/neuron.yaml", slots: "service", outcome: loads},
	{file: "karpenter-provider-aws/examples/workloads/prefer-arm.yaml", slots: "service", outcome: loads},
	{file: "karpenter-provider-aws/examples/workloads/spot.yaml", slots: "service", outcome: loads},
	{file: "karpenter-provider-aws/examples/workloads/spread-hostname-zone.yaml", slots: "service", outcome: loads},
	{file: "karpenter-provider-aws/examples/workloads/spread-hostname.yaml", slots: "service", outcome: loads},
	{file: "karpenter-provider-aws/examples/workloads/spread-zone.yaml", slots: "service", outcome: loads},
	{file: "kueue/site/static/examples/admin/concurrent-admission-setup.yaml", slots: "policy", outcome: loads},
	{file: "kueue/site/static/examples/admin/minimal-cq.yaml", slots: "policy", outcome: loads},
	{file: "kueue/site/static/examples/admin/resource-flavor-empty.yaml", slots: "policy", outcome: loads, beside: minimalCQ},
	{file: "kueue/site/static/examples/admin/resource-flavor-taints.yaml", slots: "policy", outcome: loads, beside: minimalCQ},
	{file: "kueue/site/static/examples/admin/resource-flavor-tolerations.yaml", slots: "policy", outcome: loads, beside: minimalCQ},
	{file: "kueue/site/static/examples/admin/shared-quota-sample-job.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/admin/shared-quota-setup.yaml", slots: "policy", outcome: loads},
	{file: "kueue/site/static/examples/admin/single-clusterqueue-setup.yaml", slots: "policy", outcome: loads},
	{file: "kueue/site/static/examples/admission-fs/admission-fair-sharing-setup.yaml", slots: "policy", outcome: loads},
	{file: "kueue/site/static/examples/admission-fs/lq-a-simple-job.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/admission-fs/lq-b-simple-job.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/appwrapper/deployment-sample.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/appwrapper/leaderworkerset-sample.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/appwrapper/pytorch-sample.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/dra/sample-dra-capacity-job.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/dra/sample-dra-capacity-queues.yaml", slots: "policy", outcome: loads},
	{file: "kueue/site/static/examples/dra/sample-dra-counter-job.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/dra/sample-dra-counter-queues.yaml", slots: "policy", outcome: loads},
	{file: "kueue/site/static/examples/dra/sample-dra-extended-resource-job.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/dra/sample-dra-queues.yaml", slots: "policy", outcome: loads},
	{file: "kueue/site/static/examples/dra/sample-dra-rct-job.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/getting-started/quick-start-job.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/getting-started/quick-start-setup.yaml", slots: "policy", outcome: loads},
	{file: "kueue/site/static/examples/jobs/ray-cluster-sample.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/jobs/ray-job-autoscaling-code-sample.yaml", slots: "", outcome: notInput, want: []string{"\"v1\" \"ConfigMap\""}, why: "a ConfigMap holding the RayJob's Python code"},
	{file: "kueue/site/static/examples/jobs/ray-job-autoscaling-sample.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/jobs/ray-job-code-sample.yaml", slots: "", outcome: notInput, want: []string{"\"v1\" \"ConfigMap\""}, why: "a ConfigMap holding the RayJob's Python code"},
	{file: "kueue/site/static/examples/jobs/ray-job-sample.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/jobs/ray-service-sample.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/jobs/sample-cronjob.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/jobs/sample-jaxjob.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/jobs/sample-job-partial-admission.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/jobs/sample-job.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/jobs/sample-jobset-tas-combined.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/jobs/sample-jobset-tas-required.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/jobs/sample-jobset-tas-sliced.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/jobs/sample-jobset.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/jobs/sample-mpijob.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/jobs/sample-paddlejob.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/jobs/sample-pytorchjob.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/jobs/sample-scalable-job.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/jobs/sample-sparkapplication.yaml", slots: "", outcome: gap, want: []string{"\"sparkoperator.k8s.io/v1beta2\" \"SparkApplication\""}, why: "SparkApplication (Spark operator) is not read"},
	{file: "kueue/site/static/examples/jobs/sample-tfjob.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/jobs/sample-xgboostjob.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/multikueue/dev/manager-kind-config.yaml", slots: "", outcome: notInput, want: []string{"\"kind.x-k8s.io/v1alpha4\" \"Cluster\""}, why: "kind's cluster config, not an API object"},
	{file: "kueue/site/static/examples/multikueue/dev/sample-tas-job.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/multikueue/dev/worker-kind-config.yaml", slots: "", outcome: notInput, want: []string{"\"kind.x-k8s.io/v1alpha4\" \"Cluster\""}, why: "kind's cluster config, not an API object"},
	{file: "kueue/site/static/examples/multikueue/multikueue-setup.yaml", slots: "policy", outcome: loads},
	{file: "kueue/site/static/examples/multikueue/tas/manager-setup.yaml", slots: "policy", outcome: loads},
	{file: "kueue/site/static/examples/multikueue/tas/worker-setup.yaml", slots: "policy", outcome: loads},
	{file: "kueue/site/static/examples/pod-based-workloads/sample-sandbox.yaml", slots: "", outcome: gap, want: []string{"\"agents.x-k8s.io/v1alpha1\" \"Sandbox\""}, why: "Sandbox (agents.x-k8s.io) is not read"},
	{file: "kueue/site/static/examples/pod-based-workloads/tekton-hello-task.yaml", slots: "", outcome: gap, want: []string{"\"tekton.dev/v1\" \"Task\""}, why: "Tekton Tasks, Pipelines and PipelineRuns are not read"},
	{file: "kueue/site/static/examples/pod-based-workloads/tekton-pipeline-run.yaml", slots: "", outcome: gap, want: []string{"\"tekton.dev/v1\" \"PipelineRun\""}, why: "Tekton Tasks, Pipelines and PipelineRuns are not read"},
	{file: "kueue/site/static/examples/pod-based-workloads/tekton-pipeline.yaml", slots: "", outcome: gap, want: []string{"\"tekton.dev/v1\" \"Pipeline\""}, why: "Tekton Tasks, Pipelines and PipelineRuns are not read"},
	{file: "kueue/site/static/examples/pod-based-workloads/tekton-sleep-task.yaml", slots: "", outcome: gap, want: []string{"\"tekton.dev/v1\" \"Task\""}, why: "Tekton Tasks, Pipelines and PipelineRuns are not read"},
	{file: "kueue/site/static/examples/pod-based-workloads/workflow-queue-per-template.yaml", slots: "", outcome: gap, want: []string{"\"argoproj.io/v1alpha1\" \"Workflow\""}, why: "Argo Workflows are not read"},
	{file: "kueue/site/static/examples/pod-based-workloads/workflow-single-queue.yaml", slots: "", outcome: gap, want: []string{"\"argoproj.io/v1alpha1\" \"Workflow\""}, why: "Argo Workflows are not read"},
	{file: "kueue/site/static/examples/pods-kueue/kueue-pod-group.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/pods-kueue/kueue-pod.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/provisioning/provisioning-setup.yaml", slots: "policy", outcome: loads},
	{file: "kueue/site/static/examples/provisioning/sample-job.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/sample-admission-check.yaml", slots: "policy", outcome: loads, beside: minimalCQ},
	{file: "kueue/site/static/examples/sample-enforce-requests-policy-binding.yaml", slots: "", outcome: notInput, want: []string{"\"admissionregistration.k8s.io/v1\" \"ValidatingAdmissionPolicyBinding\""}, why: "an admission policy: gpuplan takes workloads as admitted"},
	{file: "kueue/site/static/examples/sample-enforce-requests-policy.yaml", slots: "", outcome: notInput, want: []string{"\"admissionregistration.k8s.io/v1\" \"ValidatingAdmissionPolicy\""}, why: "an admission policy: gpuplan takes workloads as admitted"},
	{file: "kueue/site/static/examples/sample-validating-policy-binding.yaml", slots: "", outcome: notInput, want: []string{"\"admissionregistration.k8s.io/v1\" \"ValidatingAdmissionPolicyBinding\""}, why: "an admission policy: gpuplan takes workloads as admitted"},
	{file: "kueue/site/static/examples/sample-validating-policy.yaml", slots: "", outcome: notInput, want: []string{"\"admissionregistration.k8s.io/v1\" \"ValidatingAdmissionPolicy\""}, why: "an admission policy: gpuplan takes workloads as admitted"},
	{file: "kueue/site/static/examples/serving-workloads/sample-deployment.yaml", slots: "service", outcome: loads},
	{file: "kueue/site/static/examples/serving-workloads/sample-hami.yaml", slots: "policy+service", outcome: loads},
	{file: "kueue/site/static/examples/serving-workloads/sample-leaderworkerset-tas.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/serving-workloads/sample-leaderworkerset.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/serving-workloads/sample-statefulset.yaml", slots: "service", outcome: loads},
	{file: "kueue/site/static/examples/tas/kind-cluster.yaml", slots: "", outcome: notInput, want: []string{"\"kind.x-k8s.io/v1alpha4\" \"Cluster\""}, why: "kind's cluster config, not an API object"},
	{file: "kueue/site/static/examples/tas/sample-gpu-queues.yaml", slots: "policy", outcome: loads},
	{file: "kueue/site/static/examples/tas/sample-job-preferred.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/tas/sample-job-required.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/tas/sample-job-unconstrained.yaml", slots: "workload", outcome: loads},
	{file: "kueue/site/static/examples/tas/sample-queues.yaml", slots: "policy", outcome: loads},
	{file: "kueue/site/static/examples/visibility/cluster-role-and-binding.yaml", slots: "", outcome: notInput, want: []string{"\"rbac.authorization.k8s.io/v1\" \"ClusterRole\"", "\"rbac.authorization.k8s.io/v1\" \"ClusterRoleBinding\""}, why: "RBAC objects"},
	{file: "kueue/site/static/examples/visibility/grafana-cluster-queue-reader.yaml", slots: "", outcome: notInput, want: []string{"\"rbac.authorization.k8s.io/v1\" \"ClusterRole\"", "\"rbac.authorization.k8s.io/v1\" \"ClusterRoleBinding\""}, why: "RBAC objects"},
	{file: "kueue/site/static/examples/visibility/grafana-local-queue-reader.yaml", slots: "", outcome: notInput, want: []string{"\"rbac.authorization.k8s.io/v1\" \"ClusterRole\"", "\"rbac.authorization.k8s.io/v1\" \"ClusterRoleBinding\""}, why: "RBAC objects"},
	{file: "trainer/examples/flux/flux-interactive.yaml", slots: "workload", folder: true, outcome: loads},
	{file: "trainer/examples/flux/flux-runtime.yaml", slots: "workload", folder: true, outcome: loads},
	{file: "trainer/examples/flux/lammps-train-gpus.yaml", slots: "workload", folder: true, outcome: loads},
	{file: "trainer/examples/flux/lammps-train-job.yaml", slots: "workload", folder: true, outcome: loads},
	{file: "trainer/examples/yaml/01-multi-node.yaml", slots: "workload", outcome: loads},
	{file: "trainer/examples/yaml/02-runtime-patches.yaml", slots: "workload", outcome: loads},
	{file: "trainer/examples/yaml/03-kueue-integration.yaml", slots: "workload", outcome: loads},
	{file: "trainer/examples/yaml/04-volcano-integration.yaml", slots: "workload", outcome: loads},
	{file: "trainer/examples/yaml/05-multi-step.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/jax/cpu-demo/demo.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/jax/jax-dist-spmd-mnist/jaxjob_dist_spmd_mnist_gloo.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/mpi/tensorflow-mnist-elastic.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/mpi/tensorflow-mnist.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/paddlepaddle/simple-cpu.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/paddlepaddle/simple-gpu.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/pytorch/cpu-demo/demo.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/pytorch/deepspeed-demo/pytorch_deepspeed_demo.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/pytorch/elastic/echo/echo.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/pytorch/elastic/etcd.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/pytorch/elastic/imagenet/imagenet.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/pytorch/mnist/v1/pytorch_job_mnist_gloo.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/pytorch/mnist/v1/pytorch_job_mnist_mpi.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/pytorch/mnist/v1/pytorch_job_mnist_nccl.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/pytorch/simple.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/pytorch/smoke-dist/pytorch_job_sendrecv.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/tensorflow/dist-mnist/tf_job_mnist.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/tensorflow/distribution_strategy/multi_worker_tfjob.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/tensorflow/distribution_strategy/pvc.yaml", slots: "", outcome: notInput, want: []string{"\"v1\" \"PersistentVolumeClaim\""}, why: "storage objects"},
	{file: "training-operator/examples/tensorflow/mnist_with_summaries/tf_job_mnist.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/tensorflow/mnist_with_summaries/tfevent-volume/tfevent-pv.yaml", slots: "", outcome: notInput, want: []string{"\"v1\" \"PersistentVolume\""}, why: "storage objects"},
	{file: "training-operator/examples/tensorflow/mnist_with_summaries/tfevent-volume/tfevent-pvc.yaml", slots: "", outcome: notInput, want: []string{"\"v1\" \"PersistentVolumeClaim\""}, why: "storage objects"},
	{file: "training-operator/examples/tensorflow/simple.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/xgboost/lightgbm-dist/xgboostjob_v1_lightgbm_dist_training.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/xgboost/smoke-dist/xgboostjob_v1_rabit_test.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/xgboost/smoke-dist/xgboostjob_v1alpha1_rabit_test.yaml", slots: "workload", outcome: fileErr, want: []string{"11:9: spec.xgbReplicaSpecs[\"Master\"].template.apiVersion:", "unknown field \"apiVersion\""}, why: "apiVersion and kind inside a pod template: unknown fields of the CRD's template schema, refused by strict field validation"},
	{file: "training-operator/examples/xgboost/xgboost-dist/xgboostjob_v1_iris_predict.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/xgboost/xgboost-dist/xgboostjob_v1_iris_predict_local.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/xgboost/xgboost-dist/xgboostjob_v1_iris_train.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/xgboost/xgboost-dist/xgboostjob_v1_iris_train_local.yaml", slots: "workload", outcome: loads},
	{file: "training-operator/examples/xgboost/xgboostjob.yaml", slots: "workload", outcome: loads},
	{file: "volcano/benchmark/scripts/create-hypernodes.yaml", slots: "policy", outcome: loads, beside: "volcano/example/deployment/queue.yaml"},
	{file: "volcano/docs/user-guide/network-topology-job-partitions.yaml", slots: "workload", outcome: loads},
	{file: "volcano/docs/user-guide/network-topology-job.yaml", slots: "workload", outcome: loads},
	{file: "volcano/example/MindSpore-example/mindspore_cpu/mindspore-cpu.yaml", slots: "workload", outcome: loads},
	{file: "volcano/example/MindSpore-example/mindspore_gpu/mindspore-gpu.yaml", slots: "workload", outcome: loads},
	{file: "volcano/example/cronjob/cronjob.yaml", slots: "workload", outcome: loads},
	{file: "volcano/example/deployment/deployment.yaml", slots: "service", outcome: loads},
	{file: "volcano/example/deployment/queue.yaml", slots: "policy", outcome: loads},
	{file: "volcano/example/hierarchical-jobs/jobs.yaml", slots: "workload", outcome: loads},
	{file: "volcano/example/hierarchical-jobs/queues.yaml", slots: "policy", outcome: loads},
	{file: "volcano/example/integrations/argo/10-job-step.yaml", slots: "", outcome: gap, want: []string{"\"argoproj.io/v1alpha1\" \"Workflow\""}, why: "Argo Workflows are not read"},
	{file: "volcano/example/integrations/argo/20-job-DAG.yaml", slots: "", outcome: gap, want: []string{"\"argoproj.io/v1alpha1\" \"Workflow\""}, why: "Argo Workflows are not read"},
	{file: "volcano/example/integrations/argo/mpi/hello-world.yaml", slots: "", outcome: gap, want: []string{"\"argoproj.io/v1alpha1\" \"WorkflowTemplate\""}, why: "Argo Workflows are not read"},
	{file: "volcano/example/integrations/argo/mpi/rbac.yaml", slots: "", outcome: notInput, want: []string{"\"rbac.authorization.k8s.io/v1\" \"Role\"", "\"rbac.authorization.k8s.io/v1\" \"RoleBinding\""}, why: "RBAC objects"},
	{file: "volcano/example/integrations/mpi/mpi-example.yaml", slots: "workload", outcome: loads},
	{file: "volcano/example/integrations/mxnet/train/train-mnist-cpu.yaml", slots: "workload", outcome: loads},
	{file: "volcano/example/integrations/paddlepaddle/ctr-paddlepaddle-on-volcano.yaml", slots: "workload", outcome: loads},
	{file: "volcano/example/integrations/ray/ray-example.yaml", slots: "workload", outcome: loads},
	{file: "volcano/example/integrations/tensorflow/benchmark/tf-example.yaml", slots: "workload", outcome: loads},
	{file: "volcano/example/integrations/tensorflow/dist-mnist/tf-dist-mnist-example.yaml", slots: "workload", outcome: loads},
	{file: "volcano/example/invalid_jobs/duplicatedPolicyEvent-webhook-deny.yaml", slots: "workload", outcome: fileErr, want: []string{"26:14: spec.policies[1].event:", "Volcano's admission webhook denies the Job"}, why: "Volcano's own webhook-deny example: one event in two policies"},
	{file: "volcano/example/invalid_jobs/duplicatedTaskName-webhook-deny.yaml", slots: "workload", outcome: fileErr, want: []string{"24:13: spec.tasks[1].name:", "Volcano's admission webhook denies the Job"}, why: "Volcano's own webhook-deny example: duplicate task names"},
	{file: "volcano/example/invalid_jobs/minAvailable-webhook-deny.yaml", slots: "workload", outcome: fileErr, want: []string{"7:17: spec.minAvailable:", "is not between 1 and the job's 4 pods"}, why: "Volcano's own webhook-deny example: minAvailable above the job's pods"},
	{file: "volcano/example/job-plugin.yaml", slots: "workload", outcome: loads},
	{file: "volcano/example/job.yaml", slots: "workload", outcome: loads},
	{file: "volcano/example/jobflow/JobFlow.yaml", slots: "", outcome: gap, want: []string{"\"flow.volcano.sh/v1alpha1\" \"JobFlow\""}, why: "Volcano's JobFlow and JobTemplate are not read"},
	{file: "volcano/example/jobflow/JobTemplate.yaml", slots: "", outcome: gap, want: []string{"\"flow.volcano.sh/v1alpha1\" \"JobTemplate\""}, why: "Volcano's JobFlow and JobTemplate are not read"},
	{file: "volcano/example/kubecon-2019-china/drf/nginx-1.yaml", slots: "service", outcome: loads},
	{file: "volcano/example/kubecon-2019-china/drf/nginx-2.yaml", slots: "service", outcome: loads},
	{file: "volcano/example/kubecon-2019-china/drf/nginx.yaml", slots: "service", outcome: loads},
	{file: "volcano/example/kubecon-2019-china/gang/mpi-example.yaml", slots: "workload", outcome: loads},
	{file: "volcano/example/kubecon-2019-china/gang/nginx.yaml", slots: "service", outcome: loads},
	{file: "volcano/example/kubecon-2019-china/horovod-sample/lm-horovod-tf-mnist-v0.5.yaml", slots: "workload", outcome: loads},
	{file: "volcano/example/kubecon-2019-china/mpi-sample/mpi-example.yaml", slots: "workload", outcome: loads},
	{file: "volcano/example/kubecon-2019-china/node-selector/nginx.yaml", slots: "service", outcome: loads},
	{file: "volcano/example/kubecon-2019-china/spark-sample/spark-pi.yaml", slots: "", outcome: gap, want: []string{"\"sparkoperator.k8s.io/v1beta1\" \"SparkApplication\"", "\"scheduling.incubator.k8s.io/v1alpha1\" \"PodGroup\""}, why: "SparkApplication (Spark operator) is not read"},
	{file: "volcano/example/kubecon-2019-china/task-priority/elastic-job.yaml", slots: "workload", outcome: fileErr, want: []string{"16:11: spec.tasks[0].template.spec.priorityClass:", "unknown field \"priorityClass\""}, why: "priorityClass in a pod spec (the field is priorityClassName): unknown to the Volcano Job CRD's schema"},
	{file: "volcano/example/kubecon-2019-china/task-priority/high-priority.yaml", slots: "policy", outcome: fileErr, want: []string{"1:13: apiVersion:", "is not an apiVersion gpuplan reads for a PriorityClass"}, why: "scheduling.k8s.io/v1beta1 PriorityClass, removed in Kubernetes 1.22"},
	{file: "volcano/example/kubecon-2019-china/task-priority/nginx.yaml", slots: "service", outcome: loads},
	{file: "volcano/example/kubecon-2019-china/task-priority/normal-priority.yaml", slots: "policy", outcome: fileErr, want: []string{"1:13: apiVersion:", "is not an apiVersion gpuplan reads for a PriorityClass"}, why: "scheduling.k8s.io/v1beta1 PriorityClass, removed in Kubernetes 1.22"},
	{file: "volcano/example/kubecon-2019-china/tf-sample/tf-example.yaml", slots: "workload", outcome: loads},
	{file: "volcano/example/sharding/sharding-config-configmap.yaml", slots: "", outcome: notInput, want: []string{"\"v1\" \"ConfigMap\""}, why: "Volcano's sharding controller config"},
	{file: "volcano/example/task-start-dependency/job.yaml", slots: "workload", outcome: loads},
	{file: "volcano/example/task-start-dependency/mpi.yaml", slots: "workload", outcome: loads},
}

// slotsOf says which slots a file's kinds go in.
func slotsOf(t *testing.T, path string, data []byte) string {
	t.Helper()
	docs, err := strict.Manifests(path, data)
	require.NoError(t, err)
	reads := map[string]bool{}
	for _, k := range workloads.Kinds() {
		reads[k] = true
	}
	in := map[string]bool{}
	for _, m := range docs {
		group, _, _ := strings.Cut(m.APIVersion, "/")
		switch {
		case reads[m.APIVersion+" "+m.Kind], m.APIVersion == "trainer.kubeflow.org/v1alpha1" && (m.Kind == "ClusterTrainingRuntime" || m.Kind == "TrainingRuntime"):
			// A TrainJob's runtime is read with the workload.
			in[slotWorkload] = true
		case m.APIVersion == "apps/v1" && (m.Kind == "Deployment" || m.Kind == "ReplicaSet" || m.Kind == "StatefulSet"), m.Kind == "InferenceService":
			in[slotService] = true
		case strings.HasSuffix(group, "kueue.x-k8s.io"), strings.HasPrefix(group, "karpenter."),
			group == "scheduling.volcano.sh" && m.Kind == "Queue", group == "scheduling.k8s.io" && m.Kind == "PriorityClass",
			group == "topology.volcano.sh" && m.Kind == "HyperNode":
			in[slotPolicy] = true
		}
	}
	var out []string
	for _, s := range []string{slotPolicy, slotWorkload, slotService} {
		if in[s] {
			out = append(out, s)
		}
	}
	return strings.Join(out, "+")
}

// Every YAML file of testdata is in the table, and each loads or is
// refused in its slots as the table says.
func TestPublishedExamples(t *testing.T) {
	var files []string
	require.NoError(t, filepath.WalkDir("testdata", func(p string, _ os.DirEntry, err error) error {
		if strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") {
			files = append(files, strings.TrimPrefix(filepath.ToSlash(p), "testdata/"))
		}
		return err
	}))
	var listed []string
	for _, r := range table {
		listed = append(listed, r.file)
	}
	sort.Strings(files)
	require.Equal(t, files, listed, "the table lists every YAML file of testdata, in name order")
	for _, r := range table {
		t.Run(r.file, func(t *testing.T) {
			path := filepath.Join("testdata", r.file)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, r.slots, slotsOf(t, path, data))
			if r.slots == "" {
				// Given as a workload: nothing in it is read.
				require.Contains(t, []string{gap, notInput}, r.outcome)
				_, skipped, err := workloads.Load(path)
				require.ErrorContains(t, err, "no workload in the file")
				for _, w := range r.want {
					require.Contains(t, strings.Join(skipped, "\n"), w)
				}
				return
			}
			var errs []string
			for _, slot := range strings.Split(r.slots, "+") {
				var err error
				switch slot {
				case slotPolicy:
					paths := []string{path}
					if r.beside != "" {
						paths = append([]string{filepath.Join("testdata", r.beside)}, paths...)
					}
					_, err = scenarios.LoadPolicy(paths)
				case slotWorkload:
					if r.folder {
						_, _, err = workloads.Load(filepath.Dir(path))
					} else {
						_, _, err = workloads.Load(path)
					}
				case slotService:
					_, _, err = services.ReadServing(path, data)
				}
				if err != nil {
					errs = append(errs, err.Error())
				}
			}
			if r.outcome == loads {
				require.Empty(t, errs)
				return
			}
			require.Contains(t, []string{fileErr, gap}, r.outcome)
			require.NotEmpty(t, r.why)
			require.Len(t, errs, 1)
			// The refusal names the file, line and field first.
			require.True(t, strings.HasPrefix(errs[0], path+":"+r.want[0]), "%s", errs[0])
			for _, w := range r.want[1:] {
				require.Contains(t, errs[0], w)
			}
		})
	}
}

// Each project's share of example files that load, counted from the
// table: the report quotes these figures.
func TestPublishedExamplesShare(t *testing.T) {
	type count struct{ files, loads, fileErr, gap, notInput int }
	got := map[string]*count{}
	for _, r := range table {
		project, _, _ := strings.Cut(r.file, "/")
		c := got[project]
		if c == nil {
			c = &count{}
			got[project] = c
		}
		c.files++
		switch r.outcome {
		case loads:
			c.loads++
		case fileErr:
			c.fileErr++
		case gap:
			c.gap++
		case notInput:
			c.notInput++
		}
	}
	share := map[string]string{}
	for p, c := range got {
		share[p] = fmt.Sprintf("%d of %d files load (%d of %d inputs); refused: %d the file's error, %d not read; %d not an input",
			c.loads, c.files, c.loads, c.files-c.notInput, c.fileErr, c.gap, c.notInput)
	}
	require.Equal(t, map[string]string{
		"karpenter-provider-aws": "25 of 33 files load (25 of 33 inputs); refused: 5 the file's error, 3 not read; 0 not an input",
		"kueue":                  "60 of 80 files load (60 of 68 inputs); refused: 0 the file's error, 8 not read; 12 not an input",
		"trainer":                "9 of 9 files load (9 of 9 inputs); refused: 0 the file's error, 0 not read; 0 not an input",
		"training-operator":      "27 of 31 files load (27 of 28 inputs); refused: 1 the file's error, 0 not read; 3 not an input",
		"volcano":                "30 of 44 files load (30 of 42 inputs); refused: 6 the file's error, 6 not read; 2 not an input",
	}, share)
}
