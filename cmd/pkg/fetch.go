package main

import (
	"github.com/urfave/cli/v2"

	"pkg/fetch"
)

func fetchCommand() *cli.Command {
	return &cli.Command{
		Name:      "fetch",
		Usage:     "download packages and their dependencies into the cache without installing",
		ArgsUsage: "NAME[@VERSION|CONSTRAINT]...",
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 1, "package name"); err != nil {
				return err
			}
			reqs, err := requirements(c.Args().Slice())
			if err != nil {
				return err
			}
			src, err := openSource(c)
			if err != nil {
				return err
			}
			ix, err := src.Index(c.Context)
			if err != nil {
				return err
			}
			pkgs, err := ix.Resolve(reqs)
			if err != nil {
				return err
			}
			cache, err := fetch.OpenCache(c.String("cache"))
			if err != nil {
				return err
			}
			for _, p := range pkgs {
				tar, err := cache.Fetch(c.Context, src, p, progress(c, p))
				if err != nil {
					return err
				}
				say(c, "fetched %s %s: %s", p.Name, p.Version, tar)
			}
			return nil
		},
	}
}
