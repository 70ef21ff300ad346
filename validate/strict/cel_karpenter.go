package strict

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The CEL rules of Karpenter's karpenter.sh/v1 NodePool and
// karpenter.k8s.aws/v1 EC2NodeClass CRDs (scenarios/kube/crds/karpenter)
// that creating an object can break, each as a Go function keyed by the
// rule's exact text (see celRules). The transition rules (oldSelf:
// nodeClassRef's group and kind immutable, static and dynamic NodePools
// not interchangeable) run on update only.

// karpenterCELRules are the rules, in schema order.
var karpenterCELRules = map[string]celRule{
	// NodePool spec: a static NodePool limits nodes only.
	`!has(self.replicas) || (!has(self.limits) || size(self.limits) == 0 || (size(self.limits) == 1 && 'nodes' in self.limits))`: func(self any) bool {
		m := obj(self)
		if !has(m, "replicas") || !has(m, "limits") {
			return true
		}
		l := obj(m["limits"])
		_, nodes := l["nodes"]
		return len(l) == 0 || len(l) == 1 && nodes
	},
	// NodePool spec: a static NodePool has no weight.
	`!has(self.replicas) || !has(self.weight)`: func(self any) bool {
		m := obj(self)
		return !has(m, "replicas") || !has(m, "weight")
	},
	// NodePool spec.disruption.budgets.
	`self.all(x, has(x.schedule) == has(x.duration))`: func(self any) bool {
		return all(self, func(x map[string]any) bool { return has(x, "schedule") == has(x, "duration") })
	},
	// NodePool spec.template.metadata.labels: Karpenter's own label domains.
	`self.all(x, x in ["karpenter.sh/capacity-type", "karpenter.sh/nodepool"] || !x.find("^([^/]+)").endsWith("karpenter.sh"))`: func(self any) bool {
		return allKeys(self, func(k string) bool { return notRestrictedDomain(k, "karpenter.sh", karpenterSHAllowed) })
	},
	`self.all(x, x != "karpenter.sh/nodepool")`: func(self any) bool {
		return allKeys(self, func(k string) bool { return k != "karpenter.sh/nodepool" })
	},
	`self.all(x, x != "kubernetes.io/hostname")`: func(self any) bool {
		return allKeys(self, func(k string) bool { return k != "kubernetes.io/hostname" })
	},
	`self.all(x, x in ["karpenter.k8s.aws/instance-tenancy", "karpenter.k8s.aws/capacity-reservation-type", "karpenter.k8s.aws/capacity-reservation-id", "karpenter.k8s.aws/capacity-reservation-interruptible", "karpenter.k8s.aws/capacity-reservation-interruptible", "karpenter.k8s.aws/ec2nodeclass", "karpenter.k8s.aws/instance-encryption-in-transit-supported", "karpenter.k8s.aws/instance-category", "karpenter.k8s.aws/instance-hypervisor", "karpenter.k8s.aws/instance-family", "karpenter.k8s.aws/instance-generation", "karpenter.k8s.aws/instance-local-nvme", "karpenter.k8s.aws/instance-size", "karpenter.k8s.aws/instance-cpu", "karpenter.k8s.aws/instance-cpu-manufacturer", "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz", "karpenter.k8s.aws/instance-memory", "karpenter.k8s.aws/instance-ebs-bandwidth", "karpenter.k8s.aws/instance-network-bandwidth", "karpenter.k8s.aws/instance-gpu-name", "karpenter.k8s.aws/instance-gpu-manufacturer", "karpenter.k8s.aws/instance-gpu-count", "karpenter.k8s.aws/instance-gpu-memory", "karpenter.k8s.aws/instance-accelerator-name", "karpenter.k8s.aws/instance-accelerator-manufacturer", "karpenter.k8s.aws/instance-accelerator-count", "karpenter.k8s.aws/instance-capability-flex", "karpenter.k8s.aws/placement-group-id", "karpenter.k8s.aws/placement-group-partition"] || !x.find("^([^/]+)").endsWith("karpenter.k8s.aws"))`: func(self any) bool {
		return allKeys(self, func(k string) bool { return notRestrictedDomain(k, "karpenter.k8s.aws", karpenterAWSAllowed) })
	},
	// EC2NodeClass spec.instanceProfile and spec.role: not empty.
	`self != ''`: func(self any) bool {
		return strOf(self) != ""
	},
	// NodePool spec.template.spec.requirements.
	`self.all(x, x.operator == 'In' ? x.values.size() != 0 : true)`: func(self any) bool {
		return all(self, func(x map[string]any) bool { return str(x, "operator") != "In" || len(list(x["values"])) != 0 })
	},
	`self.all(x, (x.operator == 'Gt' || x.operator == 'Lt' || x.operator == 'Gte' || x.operator == 'Lte') ? (x.values.size() == 1 && int(x.values[0]) >= 0) : true)`: func(self any) bool {
		return all(self, func(x map[string]any) bool {
			switch str(x, "operator") {
			case "Gt", "Lt", "Gte", "Lte":
				v := list(x["values"])
				if len(v) != 1 {
					return false
				}
				// CEL's int() of a string that is not an integer is an
				// error, which fails the rule.
				n, err := strconv.ParseInt(strOf(v[0]), 10, 64)
				return err == nil && n >= 0
			}
			return true
		})
	},
	`self.all(x, (x.operator == 'In' && has(x.minValues)) ? x.values.size() >= x.minValues : true)`: func(self any) bool {
		return all(self, func(x map[string]any) bool {
			if str(x, "operator") != "In" || !has(x, "minValues") {
				return true
			}
			n, ok := num(x["minValues"])
			return ok && float64(len(list(x["values"]))) >= n
		})
	},
	// NodePool spec.template.spec.requirements[*].key: the same for a requirement's key.
	`self in ["karpenter.sh/capacity-type", "karpenter.sh/nodepool"] || !self.find("^([^/]+)").endsWith("karpenter.sh")`: func(self any) bool {
		return notRestrictedDomain(strOf(self), "karpenter.sh", karpenterSHAllowed)
	},
	`self != "karpenter.sh/nodepool"`: func(self any) bool {
		return strOf(self) != "karpenter.sh/nodepool"
	},
	`self != "kubernetes.io/hostname"`: func(self any) bool {
		return strOf(self) != "kubernetes.io/hostname"
	},
	`self in ["karpenter.k8s.aws/instance-tenancy", "karpenter.k8s.aws/capacity-reservation-type", "karpenter.k8s.aws/capacity-reservation-id", "karpenter.k8s.aws/capacity-reservation-interruptible", "karpenter.k8s.aws/ec2nodeclass", "karpenter.k8s.aws/instance-encryption-in-transit-supported", "karpenter.k8s.aws/instance-category", "karpenter.k8s.aws/instance-hypervisor", "karpenter.k8s.aws/instance-family", "karpenter.k8s.aws/instance-generation", "karpenter.k8s.aws/instance-local-nvme", "karpenter.k8s.aws/instance-size", "karpenter.k8s.aws/instance-cpu", "karpenter.k8s.aws/instance-cpu-manufacturer", "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz", "karpenter.k8s.aws/instance-memory", "karpenter.k8s.aws/instance-ebs-bandwidth", "karpenter.k8s.aws/instance-network-bandwidth", "karpenter.k8s.aws/instance-gpu-name", "karpenter.k8s.aws/instance-gpu-manufacturer", "karpenter.k8s.aws/instance-gpu-count", "karpenter.k8s.aws/instance-gpu-memory", "karpenter.k8s.aws/instance-accelerator-name", "karpenter.k8s.aws/instance-accelerator-manufacturer", "karpenter.k8s.aws/instance-accelerator-count", "karpenter.k8s.aws/instance-capability-flex", "karpenter.k8s.aws/placement-group-id", "karpenter.k8s.aws/placement-group-partition"] || !self.find("^([^/]+)").endsWith("karpenter.k8s.aws")`: func(self any) bool {
		return notRestrictedDomain(strOf(self), "karpenter.k8s.aws", karpenterAWSAllowed)
	},
	// EC2NodeClass spec: exactly one of role and instanceProfile.
	`(has(self.role) && !has(self.instanceProfile)) || (!has(self.role) && has(self.instanceProfile))`: func(self any) bool {
		m := obj(self)
		return has(m, "role") != has(m, "instanceProfile")
	},
	// EC2NodeClass spec: amiFamily, if set, agrees with an alias's family.
	`!has(self.amiFamily) || (self.amiSelectorTerms.exists(x, has(x.alias) && x.alias.find('^[^@]+') == 'al2') ? (self.amiFamily == 'Custom' || self.amiFamily == 'AL2') : true)`: func(self any) bool {
		return aliasFamilyMatches(self, "al2", "AL2")
	},
	`!has(self.amiFamily) || (self.amiSelectorTerms.exists(x, has(x.alias) && x.alias.find('^[^@]+') == 'al2023') ? (self.amiFamily == 'Custom' || self.amiFamily == 'AL2023') : true)`: func(self any) bool {
		return aliasFamilyMatches(self, "al2023", "AL2023")
	},
	`!has(self.amiFamily) || (self.amiSelectorTerms.exists(x, has(x.alias) && x.alias.find('^[^@]+') == 'bottlerocket') ? (self.amiFamily == 'Custom' || self.amiFamily == 'Bottlerocket') : true)`: func(self any) bool {
		return aliasFamilyMatches(self, "bottlerocket", "Bottlerocket")
	},
	`!has(self.amiFamily) || (self.amiSelectorTerms.exists(x, has(x.alias) && x.alias.find('^[^@]+') == 'windows2019') ? (self.amiFamily == 'Custom' || self.amiFamily == 'Windows2019') : true)`: func(self any) bool {
		return aliasFamilyMatches(self, "windows2019", "Windows2019")
	},
	`!has(self.amiFamily) || (self.amiSelectorTerms.exists(x, has(x.alias) && x.alias.find('^[^@]+') == 'windows2022') ? (self.amiFamily == 'Custom' || self.amiFamily == 'Windows2022') : true)`: func(self any) bool {
		return aliasFamilyMatches(self, "windows2022", "Windows2022")
	},
	`!has(self.amiFamily) || (self.amiSelectorTerms.exists(x, has(x.alias) && x.alias.find('^[^@]+') == 'windows2025') ? (self.amiFamily == 'Custom' || self.amiFamily == 'Windows2025') : true)`: func(self any) bool {
		return aliasFamilyMatches(self, "windows2025", "Windows2025")
	},
	`self.amiSelectorTerms.exists(x, has(x.alias)) ? true : has(self.amiFamily)`: func(self any) bool {
		m := obj(self)
		return anyOf(m["amiSelectorTerms"], func(x map[string]any) bool { return has(x, "alias") }) || has(m, "amiFamily")
	},
	// EC2NodeClass spec.amiSelectorTerms.
	`self.all(x, has(x.tags) || has(x.id) || has(x.name) || has(x.alias) || has(x.ssmParameter))`: func(self any) bool {
		return all(self, func(x map[string]any) bool { return hasAny(x, "tags", "id", "name", "alias", "ssmParameter") })
	},
	`!self.exists(x, has(x.id) && (has(x.alias) || has(x.tags) || has(x.name) || has(x.owner)))`: func(self any) bool {
		return !anyOf(self, func(x map[string]any) bool { return has(x, "id") && hasAny(x, "alias", "tags", "name", "owner") })
	},
	`!self.exists(x, has(x.alias) && (has(x.id) || has(x.tags) || has(x.name) || has(x.owner)))`: func(self any) bool {
		return !anyOf(self, func(x map[string]any) bool { return has(x, "alias") && hasAny(x, "id", "tags", "name", "owner") })
	},
	`!(self.exists(x, has(x.alias)) && self.size() != 1)`: func(self any) bool {
		return !(anyOf(self, func(x map[string]any) bool { return has(x, "alias") }) && len(list(self)) != 1)
	},
	// EC2NodeClass spec.amiSelectorTerms[*].alias.
	`self.matches('^[a-zA-Z0-9]+@.+$')`: func(self any) bool {
		return aliasFormat.MatchString(strOf(self))
	},
	`self.split('@')[0] in ['al2','al2023','bottlerocket','windows2019','windows2022','windows2025']`: func(self any) bool {
		fam, _, _ := strings.Cut(strOf(self), "@")
		return slices.Contains([]string{"al2", "al2023", "bottlerocket", "windows2019", "windows2022", "windows2025"}, fam)
	},
	`self.split('@')[0] in ['windows2019','windows2022','windows2025'] ? self.split('@')[1] == 'latest' : true`: func(self any) bool {
		fam, version, ok := strings.Cut(strOf(self), "@")
		if !slices.Contains([]string{"windows2019", "windows2022", "windows2025"}, fam) {
			return true
		}
		// split('@')[1] of an alias without '@' is an error: the rule fails.
		if v, _, _ := strings.Cut(version, "@"); ok {
			return v == "latest"
		}
		return false
	},
	// Selector terms' tags: no empty key or value.
	`self.all(k, k != '' && self[k] != '')`: func(self any) bool {
		m := obj(self)
		return allKeys(self, func(k string) bool { return k != "" && strOf(m[k]) != "" })
	},
	// EC2NodeClass spec.blockDeviceMappings.
	`self.filter(x, has(x.rootVolume)?x.rootVolume==true:false).size() <= 1`: func(self any) bool {
		n := 0
		for _, x := range list(self) {
			if b, _ := obj(x)["rootVolume"].(bool); b {
				n++
			}
		}
		return n <= 1
	},
	`has(self.snapshotID) || has(self.volumeSize)`: func(self any) bool {
		m := obj(self)
		return hasAny(m, "snapshotID", "volumeSize")
	},
	`!has(self.volumeInitializationRate) || (has(self.snapshotID) && self.snapshotID != '')`: func(self any) bool {
		m := obj(self)
		return !has(m, "volumeInitializationRate") || has(m, "snapshotID") && str(m, "snapshotID") != ""
	},
	// EC2NodeClass spec.capacityReservationSelectorTerms (the rule reads all(), not exists(): only when every term mixes id with another field).
	`self.all(x, has(x.tags) || has(x.id) || has(x.instanceMatchCriteria))`: func(self any) bool {
		return all(self, func(x map[string]any) bool { return hasAny(x, "tags", "id", "instanceMatchCriteria") })
	},
	`!self.all(x, has(x.id) && (has(x.tags) || has(x.ownerID) || has(x.instanceMatchCriteria)))`: func(self any) bool {
		return !all(self, func(x map[string]any) bool {
			return has(x, "id") && hasAny(x, "tags", "ownerID", "instanceMatchCriteria")
		})
	},
	// EC2NodeClass spec.connectionTracking.
	`has(self.tcpEstablishedTimeout) || has(self.udpStreamTimeout) || has(self.udpTimeout)`: func(self any) bool {
		return hasAny(obj(self), "tcpEstablishedTimeout", "udpStreamTimeout", "udpTimeout")
	},
	// EC2NodeClass spec.kubelet.
	`has(self.imageGCHighThresholdPercent) && has(self.imageGCLowThresholdPercent) ?  self.imageGCHighThresholdPercent > self.imageGCLowThresholdPercent  : true`: func(self any) bool {
		m := obj(self)
		hi, ok1 := num(m["imageGCHighThresholdPercent"])
		lo, ok2 := num(m["imageGCLowThresholdPercent"])
		return !(ok1 && ok2) || hi > lo
	},
	`has(self.evictionSoft) ? self.evictionSoft.all(e, (e in self.evictionSoftGracePeriod)):true`: func(self any) bool {
		m := obj(self)
		if !has(m, "evictionSoft") {
			return true
		}
		grace := obj(m["evictionSoftGracePeriod"])
		return allKeys(m["evictionSoft"], func(k string) bool { _, ok := grace[k]; return ok })
	},
	`has(self.evictionSoftGracePeriod) ? self.evictionSoftGracePeriod.all(e, (e in self.evictionSoft)):true`: func(self any) bool {
		m := obj(self)
		if !has(m, "evictionSoftGracePeriod") {
			return true
		}
		soft := obj(m["evictionSoft"])
		return allKeys(m["evictionSoftGracePeriod"], func(k string) bool { _, ok := soft[k]; return ok })
	},
	`self.all(x, x in ['memory.available','nodefs.available','nodefs.inodesFree','imagefs.available','imagefs.inodesFree','pid.available'])`: func(self any) bool {
		return allKeys(self, func(k string) bool { return slices.Contains(evictionSignals, k) })
	},
	`self.all(x, x=='cpu' || x=='memory' || x=='ephemeral-storage' || x=='pid')`: func(self any) bool {
		return allKeys(self, func(k string) bool { return slices.Contains([]string{"cpu", "memory", "ephemeral-storage", "pid"}, k) })
	},
	`self.all(x, !self[x].startsWith('-'))`: func(self any) bool {
		m := obj(self)
		return allKeys(self, func(k string) bool { return !strings.HasPrefix(strOf(m[k]), "-") })
	},
	// EC2NodeClass spec.networkInterfaces.
	`self.size() == 0 || self.exists(x, x.deviceIndex == 0 && x.networkCardIndex == 0 && x.interfaceType == 'interface')`: func(self any) bool {
		return len(list(self)) == 0 || anyOf(self, func(x map[string]any) bool {
			d, _ := num(x["deviceIndex"])
			c, _ := num(x["networkCardIndex"])
			return has(x, "deviceIndex") && has(x, "networkCardIndex") && d == 0 && c == 0 && str(x, "interfaceType") == "interface"
		})
	},
	`self.all(x, self.filter(y, x.networkCardIndex == y.networkCardIndex && x.deviceIndex == y.deviceIndex).size() == 1 && (x.interfaceType != 'efa-only' || self.filter(y, x.networkCardIndex == y.networkCardIndex && y.interfaceType == 'efa-only').size() == 1))`: func(self any) bool {
		xs := list(self)
		same := func(a, b map[string]any, key string) bool {
			u, _ := num(a[key])
			v, _ := num(b[key])
			return u == v
		}
		return all(self, func(x map[string]any) bool {
			pairs, efa := 0, 0
			for _, y := range xs {
				ym := obj(y)
				if same(x, ym, "networkCardIndex") && same(x, ym, "deviceIndex") {
					pairs++
				}
				if same(x, ym, "networkCardIndex") && str(ym, "interfaceType") == "efa-only" {
					efa++
				}
			}
			return pairs == 1 && (str(x, "interfaceType") != "efa-only" || efa == 1)
		})
	},
	// EC2NodeClass spec.placementGroupSelector.
	`has(self.name) || has(self.id)`: func(self any) bool {
		return hasAny(obj(self), "name", "id")
	},
	`!(has(self.name) && has(self.id))`: func(self any) bool {
		m := obj(self)
		return !(has(m, "name") && has(m, "id"))
	},
	// EC2NodeClass spec.securityGroupSelectorTerms and spec.subnetSelectorTerms.
	`self.size() != 0`: func(self any) bool {
		return len(list(self)) != 0
	},
	`self.all(x, has(x.tags) || has(x.id) || has(x.name))`: func(self any) bool {
		return all(self, func(x map[string]any) bool { return hasAny(x, "tags", "id", "name") })
	},
	`!self.all(x, has(x.id) && (has(x.tags) || has(x.name)))`: func(self any) bool {
		return !all(self, func(x map[string]any) bool { return has(x, "id") && hasAny(x, "tags", "name") })
	},
	`!self.all(x, has(x.name) && (has(x.tags) || has(x.id)))`: func(self any) bool {
		return !all(self, func(x map[string]any) bool { return has(x, "name") && hasAny(x, "tags", "id") })
	},
	`self.all(x, has(x.tags) || has(x.id))`: func(self any) bool {
		return all(self, func(x map[string]any) bool { return hasAny(x, "tags", "id") })
	},
	`!self.all(x, has(x.id) && has(x.tags))`: func(self any) bool {
		return !all(self, func(x map[string]any) bool { return has(x, "id") && has(x, "tags") })
	},
	// EC2NodeClass spec.tags: no empty or restricted key.
	`self.all(k, k != '')`: func(self any) bool {
		return allKeys(self, func(k string) bool { return k != "" })
	},
	`self.all(k, k !='eks:eks-cluster-name')`: func(self any) bool {
		return allKeys(self, func(k string) bool { return k != "eks:eks-cluster-name" })
	},
	`self.all(k, !k.startsWith('kubernetes.io/cluster') )`: func(self any) bool {
		return allKeys(self, func(k string) bool { return !strings.HasPrefix(k, "kubernetes.io/cluster") })
	},
	`self.all(k, k != 'karpenter.sh/nodepool')`: func(self any) bool {
		return allKeys(self, func(k string) bool { return k != "karpenter.sh/nodepool" })
	},
	`self.all(k, k !='karpenter.sh/nodeclaim')`: func(self any) bool {
		return allKeys(self, func(k string) bool { return k != "karpenter.sh/nodeclaim" })
	},
	`self.all(k, k !='karpenter.k8s.aws/ec2nodeclass')`: func(self any) bool {
		return allKeys(self, func(k string) bool { return k != "karpenter.k8s.aws/ec2nodeclass" })
	},
}

// karpenterSHAllowed are the karpenter.sh labels a NodePool may set.
var karpenterSHAllowed = []string{
	"karpenter.sh/capacity-type",
	"karpenter.sh/nodepool",
}

// karpenterAWSAllowed are the karpenter.k8s.aws labels a NodePool's
// template may set and the keys a requirement may name: the CRD's two
// rules list the same keys (the labels' rule names one twice).
var karpenterAWSAllowed = []string{
	"karpenter.k8s.aws/instance-tenancy",
	"karpenter.k8s.aws/capacity-reservation-type",
	"karpenter.k8s.aws/capacity-reservation-id",
	"karpenter.k8s.aws/capacity-reservation-interruptible",
	"karpenter.k8s.aws/ec2nodeclass",
	"karpenter.k8s.aws/instance-encryption-in-transit-supported",
	"karpenter.k8s.aws/instance-category",
	"karpenter.k8s.aws/instance-hypervisor",
	"karpenter.k8s.aws/instance-family",
	"karpenter.k8s.aws/instance-generation",
	"karpenter.k8s.aws/instance-local-nvme",
	"karpenter.k8s.aws/instance-size",
	"karpenter.k8s.aws/instance-cpu",
	"karpenter.k8s.aws/instance-cpu-manufacturer",
	"karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz",
	"karpenter.k8s.aws/instance-memory",
	"karpenter.k8s.aws/instance-ebs-bandwidth",
	"karpenter.k8s.aws/instance-network-bandwidth",
	"karpenter.k8s.aws/instance-gpu-name",
	"karpenter.k8s.aws/instance-gpu-manufacturer",
	"karpenter.k8s.aws/instance-gpu-count",
	"karpenter.k8s.aws/instance-gpu-memory",
	"karpenter.k8s.aws/instance-accelerator-name",
	"karpenter.k8s.aws/instance-accelerator-manufacturer",
	"karpenter.k8s.aws/instance-accelerator-count",
	"karpenter.k8s.aws/instance-capability-flex",
	"karpenter.k8s.aws/placement-group-id",
	"karpenter.k8s.aws/placement-group-partition",
}

// evictionSignals are the kubelet eviction signals an EC2NodeClass's
// kubelet settings may name.
var evictionSignals = []string{"memory.available", "nodefs.available", "nodefs.inodesFree", "imagefs.available", "imagefs.inodesFree", "pid.available"}

// aliasFormat is an AMI alias's format, family@version.
var aliasFormat = regexp.MustCompile(`^[a-zA-Z0-9]+@.+$`)

// notRestrictedDomain is the CEL
// `k in allowed || !k.find("^([^/]+)").endsWith(domain)`: a label key of
// the domain (the part before its first '/') is allowed only if listed.
func notRestrictedDomain(k, domain string, allowed []string) bool {
	if slices.Contains(allowed, k) {
		return true
	}
	prefix, _, _ := strings.Cut(k, "/")
	return !strings.HasSuffix(prefix, domain)
}

// aliasFamilyMatches is the CEL `!has(self.amiFamily) ||
// (self.amiSelectorTerms.exists(x, has(x.alias) &&
// x.alias.find('^[^@]+') == family) ? (self.amiFamily == 'Custom' ||
// self.amiFamily == amiFamily) : true)`.
func aliasFamilyMatches(self any, family, amiFamily string) bool {
	m := obj(self)
	if !has(m, "amiFamily") {
		return true
	}
	uses := anyOf(m["amiSelectorTerms"], func(x map[string]any) bool {
		fam, _, _ := strings.Cut(str(x, "alias"), "@")
		return has(x, "alias") && fam == family
	})
	return !uses || str(m, "amiFamily") == "Custom" || str(m, "amiFamily") == amiFamily
}

// strOf is a JSON string ("" for anything else).
func strOf(v any) string { s, _ := v.(string); return s }

// num is a JSON number.
func num(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

// allKeys is CEL's all() over a map's keys.
func allKeys(self any, f func(string) bool) bool {
	for k := range obj(self) {
		if !f(k) {
			return false
		}
	}
	return true
}

// anyOf is CEL's exists() over a list of objects.
func anyOf(self any, f func(map[string]any) bool) bool {
	for _, x := range list(self) {
		if f(obj(x)) {
			return true
		}
	}
	return false
}

// hasAny is has(m.a) || has(m.b) ...
func hasAny(m map[string]any, keys ...string) bool {
	for _, k := range keys {
		if has(m, k) {
			return true
		}
	}
	return false
}
