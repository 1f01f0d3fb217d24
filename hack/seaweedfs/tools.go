//go:build tools

// Package seaweedfs pins the SeaweedFS release whose weed binary the tests use as a real
// S3-compatible server (hack/seaweedfs.sh builds it).
package seaweedfs

import (
	_ "github.com/seaweedfs/seaweedfs/weed"
)
