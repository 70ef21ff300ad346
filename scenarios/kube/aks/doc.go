// Package aks reads and writes AKS agent pools as an ARM deployment
// template (resources of type Microsoft.ContainerService/managedClusters/agentPools),
// the form `az deployment group create --template-file` applies and the
// Azure portal exports. gpuplan manifests --provider aks writes one; a
// scenario's spec.cluster.agentPools reads one back as pools. ARM's JSON
// was chosen over `az aks nodepool add` commands because it is data: it
// reads back without parsing a shell script, and Bicep decompiles from it.
package aks
