// Command notplugin is an executable that is not a plugin.
package main

import "fmt"

func main() { fmt.Println("hello, I am not a plugin") }
