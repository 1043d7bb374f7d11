package classifier_test

import (
	"fmt"

	"github.com/artifactforge/forge/classifier"
)

func ExampleClassify() {
	failures := []classifier.Failure{
		{Kind: classifier.KindPanic},
		{Kind: classifier.KindDeadline, HostCallInFlight: true},
		{Kind: classifier.KindHost, HTTPStatus: 404},
		{Kind: classifier.KindHost, HTTPStatus: 429},
		{Kind: classifier.KindDeliverable, UpstreamRead: true},
		{Kind: classifier.KindArgs},
	}
	for _, f := range failures {
		r := classifier.Classify(f)
		fmt.Printf("%-28s counts=%-5v retriable=%v\n", r, r.Class.CountsTowardHealth(), r.Retriable())
	}
	// Output:
	// intrinsic/panic              counts=true  retriable=false
	// extrinsic/deadline_host_in_flight counts=false retriable=true
	// adaptive/host_http_gone      counts=true  retriable=false
	// extrinsic/host_http_429      counts=false retriable=true
	// adaptive/deliverable_after_upstream counts=true  retriable=false
	// caller/args                  counts=false retriable=false
}

func ExampleClass_CountsTowardHealth() {
	for _, c := range classifier.Classes {
		fmt.Println(c, c.CountsTowardHealth())
	}
	// Output:
	// intrinsic true
	// extrinsic false
	// adaptive true
	// caller false
}
