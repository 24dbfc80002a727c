from massgen_cli.cli import main

main()
