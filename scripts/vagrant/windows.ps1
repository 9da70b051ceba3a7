# The windows machine of the Vagrantfile: installs Go from go.dev (checked
# against its published SHA-256), unpacks the sources the Vagrantfile
# uploaded, and runs go vet and go test ./... on real Windows, with
# FORGEBOX_REAL_WINDOWS=1 so that the Windows backend's tests create real
# restricted tokens, job objects and pseudo-consoles instead of skipping.
# Linux-only packages do not build here and are left out by ./... ; cgo is
# off (no C compiler), as in the release build for Windows.
#
# usage (elevated PowerShell): windows.ps1 -GoVersion 1.26.8 -Sources C:\forgebox-src.tar
param(
    [string]$GoVersion = "1.26.8",
    [string]$Sources = "C:\forgebox-src.tar",
    [string]$Dest = "C:\forgebox"
)
$ErrorActionPreference = "Stop"
$ProgressPreference = "SilentlyContinue" # Invoke-WebRequest crawls with a progress bar

function Step($what) { Write-Host "== $what" }

# Native runs a native command (a script block) and returns its exit
# status. Its stderr is passed on as plain text: under WinRM, Windows
# PowerShell turns a native program's stderr into error records, which
# "Stop" would make fatal ("go: downloading ...").
function Native([scriptblock]$Command) {
    $saved = $ErrorActionPreference
    $ErrorActionPreference = "Continue"
    try { & $Command 2>&1 | ForEach-Object { "$_" } | Out-Host } finally { $ErrorActionPreference = $saved }
    return $LASTEXITCODE
}

# Run runs a native command that must succeed.
function Run([scriptblock]$Command) {
    $code = Native $Command
    if ($code -ne 0) { throw "$Command exited $code" }
}

$arch = if ($env:PROCESSOR_ARCHITECTURE -eq "ARM64") { "arm64" } else { "amd64" }
$goroot = "C:\Program Files\Go"
$go = Join-Path $goroot "bin\go.exe"

Step "Go $GoVersion ($arch)"
$have = if (Test-Path $go) { & $go env GOVERSION } else { "" }
if ($have -ne "go$GoVersion") {
    $zip = "go$GoVersion.windows-$arch.zip"
    $tmp = Join-Path $env:TEMP $zip
    Invoke-WebRequest -UseBasicParsing -Uri "https://go.dev/dl/$zip" -OutFile $tmp
    $want = (Invoke-WebRequest -UseBasicParsing -Uri "https://dl.google.com/go/$zip.sha256").Content.Trim()
    $got = (Get-FileHash -Algorithm SHA256 $tmp).Hash.ToLowerInvariant()
    if ($got -ne $want) { throw "$zip does not match its SHA-256 ($got, want $want)" }
    if (Test-Path $goroot) { Remove-Item -Recurse -Force $goroot }
    $unpack = Join-Path $env:TEMP "go-unpack"
    if (Test-Path $unpack) { Remove-Item -Recurse -Force $unpack }
    Expand-Archive -Path $tmp -DestinationPath $unpack
    Move-Item (Join-Path $unpack "go") $goroot
    Remove-Item -Force $tmp
}
$machinePath = [Environment]::GetEnvironmentVariable("Path", "Machine")
if ($machinePath -notlike "*$goroot\bin*") {
    [Environment]::SetEnvironmentVariable("Path", "$goroot\bin;$machinePath", "Machine")
}
$env:Path = "$goroot\bin;$env:Path"
Run { go version }

Step "sources"
if (-not (Test-Path $Sources) -or (Get-Item $Sources).Length -eq 0) {
    throw "$Sources is missing or empty: run vagrant up, provision or reload, which pack the sources"
}
if (Test-Path $Dest) { Remove-Item -Recurse -Force $Dest }
New-Item -ItemType Directory -Path $Dest | Out-Null
Run { tar.exe -xf $Sources -C $Dest }
Set-Location $Dest

$env:CGO_ENABLED = "0"
$env:FORGEBOX_REAL_WINDOWS = "1"
Write-Host "Windows $([Environment]::OSVersion.VersionString), user $env:USERNAME"

Step "go vet ./..."
Run { go vet ./... }
Step "go build ./cmd/forgebox"
Run { go build -o bin\forgebox.exe ./cmd/forgebox }
Step "forgebox doctor (for information)"
$code = Native { .\bin\forgebox.exe doctor }
Write-Host "(doctor exited $code)"
Step "go test ./... with FORGEBOX_REAL_WINDOWS=1"
Run { go test -count=1 ./... }
Step "windows: all passed"
