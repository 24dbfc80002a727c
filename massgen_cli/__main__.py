from massgen_cli.cli.main import main

main()
