package manifests

import (
	"bytes"
	"fmt"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	kueuecfg "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/kube/dra"
	"gpuplan.dev/gpuplan/validate/strict"
)

// newObject returns an empty typed object for an apiVersion and kind this
// package writes, or nil.
func newObject(apiVersion, kind string) any {
	switch apiVersion + " " + kind {
	case "v1 Namespace":
		return &corev1.Namespace{}
	case "v1 ConfigMap":
		return &corev1.ConfigMap{}
	case "v1 Service":
		return &corev1.Service{}
	case "v1 PersistentVolumeClaim":
		return &corev1.PersistentVolumeClaim{}
	case dra.APIVersion + " DeviceClass":
		return &resourcev1.DeviceClass{}
	case dra.APIVersion + " ResourceClaimTemplate":
		return &resourcev1.ResourceClaimTemplate{}
	case HyperNodeAPIVersion + " HyperNode":
		return &HyperNode{}
	case "batch/v1 Job":
		return &batchv1.Job{}
	case "apps/v1 Deployment":
		return &appsv1.Deployment{}
	case "autoscaling/v2 HorizontalPodAutoscaler":
		return &autoscalingv2.HorizontalPodAutoscaler{}
	case KEDAAPIVersion + " ScaledObject":
		return &ScaledObject{}
	case KServeAPIVersion + " InferenceService":
		return &InferenceService{}
	case LLMISVCAPIVersion + " LLMInferenceService":
		return &LLMInferenceService{}
	case "scheduling.k8s.io/v1 PriorityClass":
		return &schedulingv1.PriorityClass{}
	case "karpenter.sh/v1 NodePool":
		return &karpv1.NodePool{}
	case "karpenter.k8s.aws/v1 EC2NodeClass":
		return &EC2NodeClass{}
	case kueue.SchemeGroupVersion.String() + " Topology":
		return &kueue.Topology{}
	case kueue.SchemeGroupVersion.String() + " ResourceFlavor":
		return &kueue.ResourceFlavor{}
	case kueue.SchemeGroupVersion.String() + " ClusterQueue":
		return &kueue.ClusterQueue{}
	case kueue.SchemeGroupVersion.String() + " LocalQueue":
		return &kueue.LocalQueue{}
	case "monitoring.coreos.com/v1 PrometheusRule":
		return &monitoringv1.PrometheusRule{}
	case VolcanoAPIVersion + " Job":
		return &VolcanoJob{}
	case VolcanoQueueAPIVersion + " Queue":
		return &scenarios.VolcanoQueue{}
	case kueue.SchemeGroupVersion.String() + " WorkloadPriorityClass":
		return &kueue.WorkloadPriorityClass{}
	case kueue.SchemeGroupVersion.String() + " Cohort":
		return &kueue.Cohort{}
	case "storage.k8s.io/v1 StorageClass":
		return &storagev1.StorageClass{}
	case KubeflowAPIVersion + " PyTorchJob":
		return &PyTorchJob{}
	case KubeflowAPIVersion + " TFJob":
		return &TFJob{}
	case EksctlAPIVersion + " ClusterConfig":
		return &ClusterConfig{}
	}
	return nil
}

// Decode reads a generated file back: every document strictly into its
// type (an unknown or misspelt field is an error naming the document),
// and the device-plugin and mig-parted configurations inside the GPU
// Operator's ConfigMaps strictly into theirs.
func Decode(file string, data []byte) ([]any, error) {
	var out []any
	for i, doc := range splitDocuments(data) {
		var tm metav1.TypeMeta
		if err := strict.Unmarshal(doc, &tm); err != nil {
			return nil, fmt.Errorf("%s: document %d: %v", file, i+1, err)
		}
		obj := newObject(tm.APIVersion, tm.Kind)
		if obj == nil {
			return nil, fmt.Errorf("%s: document %d: apiVersion %q kind %q is not one gpuplan writes", file, i+1, tm.APIVersion, tm.Kind)
		}
		if err := strict.UnmarshalStrict(doc, obj); err != nil {
			return nil, fmt.Errorf("%s: document %d (%s): %v", file, i+1, tm.Kind, err)
		}
		if cm, ok := obj.(*corev1.ConfigMap); ok {
			if err := decodeConfigData(cm); err != nil {
				return nil, fmt.Errorf("%s: document %d (ConfigMap %s): %v", file, i+1, cm.Name, err)
			}
		}
		out = append(out, obj)
	}
	return out, nil
}

func decodeConfigData(cm *corev1.ConfigMap) error {
	for key, v := range cm.Data {
		var err error
		switch cm.Name {
		case DevicePluginConfigMap:
			var c DevicePluginConfig
			err = strict.UnmarshalStrict([]byte(v), &c)
			if err == nil && c.Version != "v1" {
				err = fmt.Errorf("version %q, want v1", c.Version)
			}
		case KueueConfigMap:
			var c kueuecfg.Configuration
			err = strict.UnmarshalStrict([]byte(v), &c)
		case VolcanoSchedulerConfigMap:
			var c volcanoConf
			err = strict.UnmarshalStrict([]byte(v), &c)
		case MigConfigMap:
			var c MigPartedConfig
			err = strict.UnmarshalStrict([]byte(v), &c)
			if err == nil && c.Version != "v1" {
				err = fmt.Errorf("version %q, want v1", c.Version)
			}
		}
		if err != nil {
			return fmt.Errorf("data[%s]: %v", key, err)
		}
	}
	return nil
}

// splitDocuments splits multi-document YAML on "---" lines, dropping
// documents that hold only comments.
func splitDocuments(data []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	flush := func() {
		keep := false
		for _, l := range strings.Split(cur.String(), "\n") {
			if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
				keep = true
				break
			}
		}
		if keep {
			docs = append(docs, append([]byte(nil), cur.Bytes()...))
		}
		cur.Reset()
	}
	for _, l := range bytes.SplitAfter(data, []byte("\n")) {
		if t := bytes.TrimRight(l, " \r\n"); bytes.Equal(t, []byte("---")) {
			flush()
			continue
		}
		cur.Write(l)
	}
	flush()
	return docs
}
