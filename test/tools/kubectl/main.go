// Command kubectl is the upstream kubectl command as k8s.io/kubernetes/cmd/kubectl builds it
// (without the cloud auth plugins), from the published k8s.io/kubectl module: the tests run
// `kubectl podlife` through its plugin mechanism.
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
