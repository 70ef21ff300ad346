// Package topology places a pool's nodes in the levels of a GPU datacentre
// (host, NVLink domain, rack, block behind one spine, zone) and prices a
// gang's ring all-reduce by the slowest level its nodes span.
//
// A ring all-reduce moves every byte through every link of the ring, so
// its bus bandwidth is that of the slowest link: a gang inside one NVLink
// domain runs at NVLink speed, one that crosses hosts of a rack at the
// network rails' speed, one that crosses racks at the spine's share of the
// rails (the leaf-to-spine oversubscription), one that crosses blocks at
// the datacentre core's share. Each level's time is the alpha-beta model
// of models.Fabric: alpha + S x 2(n-1)/n / busbw.
//
// The defaults come from published figures, each with its source in the
// Fabric's or Ratio's Source; an oversubscription is an assumption and
// says so. A pool or a calibration profile overrides any of them.
package topology
