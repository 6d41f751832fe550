"""The component package's entry point: the Python language host runs this file to serve the components."""

from gpuplane.infra.provider import main

main()
