package manifests

// The output folder's layout. Everything the API server takes is under
// Applied, named so that `kubectl apply -R -f DIR/kubernetes` (which
// walks a folder in lexical order and reads only .yaml, .yml and .json
// files) creates what an object names before the object: namespaces,
// PriorityClasses, the StorageClass and the GPU Operator's ConfigMaps
// first (no custom resource definitions needed), then the projects'
// custom resources (Karpenter's, Kueue's or Volcano's, the
// PrometheusRule), then what the workloads share (a class's headless
// Service and checkpoint claim) and the services. Files that kubectl
// apply cannot take sit beside the folder, not in it: eksctl's
// ClusterConfig (not an API object) and the job classes' templates
// (DirJobTemplates: generateName, which kubectl apply refuses).
const (
	Applied             = "kubernetes"
	PathNamespaces      = Applied + "/00-namespaces.yaml"
	PathPriorityClasses = Applied + "/01-priorityclasses.yaml"
	PathStorage         = Applied + "/02-storage.yaml"
	PathGPUOperator     = Applied + "/03-gpu-operator.yaml"
	PathEC2NodeClass    = Applied + "/10-karpenter/ec2nodeclass.yaml"
	PathNodePools       = Applied + "/10-karpenter/nodepools.yaml"
	PathKueue           = Applied + "/20-kueue.yaml"
	PathKueueConfig     = Applied + "/21-kueue-config.yaml"
	PathVolcano         = Applied + "/20-volcano-queues.yaml"
	PathPrometheusRule  = Applied + "/30-prometheusrule.yaml"
	DirJobs             = Applied + "/40-jobs/"
	// DirJobTemplates holds a job per workload class written with
	// metadata.generateName: a template for repeated submission,
	// `kubectl create -f jobs/CLASS.yaml` once per job (each gets a new
	// name; kubectl apply refuses an object without a name).
	DirJobTemplates = "jobs/"
	DirServices     = Applied + "/40-services/"
	// PathEksctl is eksctl's ClusterConfig: `eksctl create nodegroup
	// --config-file`, not kubectl.
	PathEksctl = "eksctl-nodegroups.yaml"
)
