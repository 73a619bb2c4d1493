"""The catalogue of the command line's user-facing messages: pt-BR by default, English by
setting (`PONTUAL_LANG=en`).

Gettext's convention without its build step (docs/adr/0075): a message's id is its English
text, a template with ``{named}`` fields; `CATALOGUE` gives its pt-BR text. `gettext(msgid,
**fields)` formats a message in the chosen language; `translate(text)` turns an English text
that the layers below produce (ingest notes, e.g. "no records read: the file has a header line
and no records") into the chosen language by matching it against the templates (a text no
template matches is shown as it is). Standard library only: imported at start-up.
"""

from __future__ import annotations

import os
import re
from functools import cache

LANG_ENV = "PONTUAL_LANG"
DEFAULT_LANG = "pt_BR"

CATALOGUE: dict[str, str] = {
    # -- the error printer (pontual/cli.py) ------------------------------------------------
    "error: {text}": "erro: {text}",
    "where: {text}": "onde: {text}",
    "hint: {text}": "dica: {text}",
    "interrupted": "interrompido",
    "internal error: {name}: {text} (run with --debug for the traceback)": (
        "erro interno: {name}: {text} (rode com --debug para ver o traceback)"
    ),
    # -- argparse's own texts (pontual/parser.py; Python 3.11 to 3.13) ------------------------
    "usage: ": "uso: ",
    "positional arguments": "argumentos posicionais",
    "options": "opções",
    "optional arguments": "opções",
    "show this help message and exit": "mostra esta ajuda e sai",
    "see `{prog} --help`": "veja `{prog} --help`",
    "argument {name}: {text}": "argumento {name}: {text}",
    "invalid {kind} value: {value}": "valor inválido para {kind}: {value}",
    "invalid choice: {value} (choose from {choices})": (
        "escolha inválida: {value} (escolha entre {choices})"
    ),
    "the following arguments are required: {names}": (
        "os seguintes argumentos são obrigatórios: {names}"
    ),
    "unrecognized arguments: {names}": "argumentos não reconhecidos: {names}",
    "expected one argument": "esperado um argumento",
    "expected at most one argument": "esperado no máximo um argumento",
    "expected at least one argument": "esperado ao menos um argumento",
    "expected {n} arguments": "esperados {n} argumentos",
    "expected {n} argument": "esperado {n} argumento",
    "ambiguous option: {option} could match {matches}": (
        "opção ambígua: {option} pode ser {matches}"
    ),
    "not allowed with argument {name}": "não permitido junto com o argumento {name}",
    "one of the arguments {names} is required": "um dos argumentos {names} é obrigatório",
    "ignored explicit argument {value}": "argumento explícito ignorado: {value}",
    "expected a date YYYY-MM-DD, got {text}": "esperava uma data AAAA-MM-DD, veio {text}",
    "show the version and exit": "mostra a versão e sai",
    # -- help texts of the options and verbs (pontual/verbs/*; shown by pontual/parser.py) ---
    "Pontual: how well a city's buses keep their promises (ICV, IPK, lotação, grades) from GTFS, AVL and ticketing data.": "Pontual: quanto os ônibus de uma cidade cumprem o prometido (ICV, IPK, lotação, conceitos) a partir de dados GTFS, AVL e de bilhetagem.",
    "DuckDB store file (env PONTUAL_STORE; default data/pontual.duckdb)": "arquivo DuckDB do armazenamento (env PONTUAL_STORE; padrão data/pontual.duckdb)",
    "regulation profile id or .toml path (env PONTUAL_PROFILE)": "id do perfil de regulamentação ou caminho .toml (env PONTUAL_PROFILE)",
    "read a Parquet lake (pontual export parquet) instead of the store file (env PONTUAL_LAKE); verbs that write the store refuse it": "ler um lago Parquet (pontual export parquet) em vez do arquivo do armazenamento (env PONTUAL_LAKE); verbos que escrevem no armazenamento o recusam",
    "print only errors": "mostrar só os erros",
    "show tracebacks": "mostrar tracebacks",
    "create or migrate the store and the card-hashing key": "criar ou migrar o armazenamento e a chave de hash dos cartões",
    "list regulation profiles or show one with its sources": "listar os perfis de regulamentação ou mostrar um com suas fontes",
    "simulate a city's bus operation with its ground truth (GTFS, AVL, fares, registers)": "simular a operação de ônibus de uma cidade com sua verdade de referência (GTFS, AVL, tarifas, cadastros)",
    "validate and load GTFS feeds; materialise scheduled trips": "validar e carregar feeds GTFS; materializar as viagens programadas",
    "load AVL pings, fare taps, the fleet register, incidents, surveys, inspections": "carregar posições AVL, validações de tarifa, cadastro da frota, incidentes, pesquisas, fiscalizações",
    "list quarantined records with their reasons": "listar os registros em quarentena com seus motivos",
    "consume live AVL and fare messages from an MQTT broker (QoS 1, no loss)": "consumir mensagens AVL e de tarifa ao vivo de um broker MQTT (QoS 1, sem perdas)",
    "match AVL pings to scheduled trips: outcomes, stop visits, breakdowns": "casar as posições AVL com as viagens programadas: resultados, passagens nas paradas, quebras",
    "place taps, infer alightings, compute loads and crowding (art. 59)": "posicionar validações, inferir desembarques, calcular cargas e lotação (art. 59)",
    "ICV, IQS, km, IPK, fleet, grades and suggested infractions of a period": "ICV, IQS, km, IPK, frota, conceitos e infrações sugeridas de um período",
    "semester report, monthly operating report, annual renewal dossier (PDF/XLSX/CSV)": "relatório semestral, relatório mensal de operação, dossiê anual de renovação (PDF/XLSX/CSV)",
    "export the store: TIDES tables, or the partitioned Parquet lake": "exportar o armazenamento: tabelas TIDES, ou o lago Parquet particionado",
    "the partitioned Parquet lake (same as export parquet)": "o lago Parquet particionado (o mesmo que export parquet)",
    "live feed: consume the MQTT streams and serve GTFS-Realtime and stop arrivals": "feed ao vivo: consumir os fluxos MQTT e servir GTFS-Realtime e chegadas às paradas",
    "publish a recorded AVL file through MQTT in event-time order (demos, real-day trials)": "publicar um arquivo AVL gravado via MQTT na ordem dos eventos (demonstrações, testes com dias reais)",
    "open the planners' dashboard (reads the published snapshot, never locks the store)": "abrir o painel do planejamento (lê o instantâneo publicado, nunca bloqueia o armazenamento)",
    "simulate a sample city, run every pipeline stage into the store, start the dashboard": "simular uma cidade de exemplo, rodar todas as etapas no armazenamento, abrir o painel",
    "shipped profiles": "perfis incluídos",
    "every value of a profile with its article": "todos os valores de um perfil com seu artigo",
    "profile id or path to a .toml file": "id do perfil ou caminho de um arquivo .toml",
    "output folder (created)": "pasta de saída (criada)",
    "simulate on this GTFS feed instead of the built-in city": "simular sobre este feed GTFS em vez da cidade embutida",
    "first service date (default 2026-03-02)": "primeiro dia de serviço (padrão 2026-03-02)",
    "number of days (default 7)": "número de dias (padrão 7)",
    "simulate a sampled year instead of --start/--days: --days-per-month working days of each month of YEAR": "simular um ano amostrado em vez de --start/--days: --days-per-month dias úteis de cada mês de YEAR",
    "with --year: working days simulated in each month, spread over it (default 1)": "com --year: dias úteis simulados em cada mês, espalhados nele (padrão 1)",
    "random seed (same seed -> same files)": "semente aleatória (mesma semente -> mesmos arquivos)",
    "vehicles at the peak (default 40; above 200 a synthetic grid city is used)": "veículos no pico (padrão 40; acima de 200 usa-se uma cidade sintética em grade)",
    "AVL ping interval, s": "intervalo entre posições AVL, s",
    "GPS noise σ, metres": "ruído do GPS σ, metros",
    "add reported_trip_id to the AVL": "incluir reported_trip_id no AVL",
    "days covered by avl.csv and the MQTT files (0: all; Parquet has all)": "dias cobertos por avl.csv e pelos arquivos MQTT (0: todos; o Parquet tem todos)",
    "validate a feed (zip or folder) and load it": "validar um feed (zip ou pasta) e carregá-lo",
    "check a feed and list its errors and warnings": "conferir um feed e listar seus erros e avisos",
    "materialise scheduled trips for a date range": "materializar as viagens programadas de um intervalo de datas",
    "GTFS .zip or folder of .txt files": "arquivo .zip GTFS ou pasta de arquivos .txt",
    "first service day to schedule": "primeiro dia de serviço a programar",
    "last service day to schedule": "último dia de serviço a programar",
    "warn of a stop farther than this from its trip's shape, m (default 100, as the canonical GTFS validator)": "avisar de uma parada a mais que isto do traçado da sua viagem, m (padrão 100, como o validador GTFS canônico)",
    "list every issue, not the first 40": "listar todos os problemas, não só os 40 primeiros",
    "YYYY-MM-DD": "AAAA-MM-DD",
    "ingest avl files into vehicle_locations": "carregar arquivos avl em vehicle_locations",
    "ingest fares files into fare_transactions": "carregar arquivos fares em fare_transactions",
    "ingest vehicles files into vehicles": "carregar arquivos vehicles em vehicles",
    "ingest incidents files into incidents": "carregar arquivos incidents em incidents",
    "ingest surveys files into iqs_surveys": "carregar arquivos surveys em iqs_surveys",
    "ingest counts files into passenger_counts": "carregar arquivos counts em passenger_counts",
    "ingest inspections files into inspections": "carregar arquivos inspections em inspections",
    "vendor mapping: shipped name (e.g. sube) or .toml path": "mapeamento do fornecedor: nome incluído (ex.: sube) ou caminho .toml",
    "IANA zone of times without offset (default: the profile's)": "fuso IANA dos horários sem deslocamento (padrão: o do perfil)",
    "strptime format of the source's times": "formato strptime dos horários da fonte",
    "records per transaction (default 1 000 000)": "registros por transação (padrão 1 000 000)",
    "allowed clock skew into the future, s": "adiantamento de relógio tolerado, s",
    "margin around the stops' box, m": "margem em torno da área das paradas, m",
    "highest believable speed, m/s": "maior velocidade plausível, m/s",
    "Olho Vivo: oldest fix kept, s": "Olho Vivo: posição mais antiga aceita, s",
    "records dated before 1 January of this year are refused (default 2000)": "registros datados antes de 1º de janeiro deste ano são recusados (padrão 2000)",
    "store records of vehicles absent from the fleet register": "guardar registros de veículos ausentes do cadastro da frota",
    "GPX: vehicle id of the track (default: track name)": "GPX: id do veículo da trilha (padrão: o nome da trilha)",
    "GTFS-RT VehiclePositions URL to poll": "URL de VehiclePositions GTFS-RT a consultar",
    "polling interval, s": "intervalo entre consultas, s",
    "number of polls (default: until interrupted)": "número de consultas (padrão: até ser interrompido)",
    "only records whose source contains this text": "só os registros cuja origem contém este texto",
    "rows to show (default 50)": "linhas a mostrar (padrão 50)",
    "Subscribe to {root}/avl/+/+ and {root}/fares/+/+ with QoS 1 in a persistent session and write the messages to the store in batches; a message is acknowledged only after its batch is committed.": "Assina {root}/avl/+/+ e {root}/fares/+/+ com QoS 1 numa sessão persistente e grava as mensagens no armazenamento em lotes; uma mensagem só é confirmada depois que seu lote é gravado.",
    "broker host (default 127.0.0.1)": "host do broker (padrão 127.0.0.1)",
    "broker port (default 1883)": "porta do broker (padrão 1883)",
    "broker account of the listener": "conta do ouvinte no broker",
    "its password (better: env PONTUAL_MQTT_PASSWORD)": "sua senha (melhor: env PONTUAL_MQTT_PASSWORD)",
    "CA certificate file: connect with TLS": "arquivo do certificado da AC: conectar com TLS",
    "client certificate (mutual TLS)": "certificado do cliente (TLS mútuo)",
    "client private key (mutual TLS)": "chave privada do cliente (TLS mútuo)",
    "do not check the host name": "não conferir o nome do host",
    "fixed client id naming the session (pontual-listener)": "id de cliente fixo que nomeia a sessão (pontual-listener)",
    "first topic level (default pontual)": "primeiro nível dos tópicos (padrão pontual)",
    "MQTT 5 shared subscription group (several listeners)": "grupo de assinatura compartilhada MQTT 5 (vários ouvintes)",
    "commit every N messages (default 5000)": "gravar a cada N mensagens (padrão 5000)",
    "or every S seconds (default 1.0)": "ou a cada S segundos (padrão 1.0)",
    "publish the readers' snapshot every S s (60)": "publicar o instantâneo dos leitores a cada S s (60)",
    "stop after N messages (tests)": "parar após N mensagens (testes)",
    "stop after S seconds without messages": "parar após S segundos sem mensagens",
    "first service day (YYYY-MM-DD)": "primeiro dia de serviço (AAAA-MM-DD)",
    "last service day (default: --from)": "último dia de serviço (padrão: --from)",
    "processes for the vehicle partitions (each runs two batches at once in threads; default: one per two cores)": "processos para as partições de veículos (cada um roda dois lotes de uma vez em threads; padrão: um a cada dois núcleos)",
    "local: this machine, the store file (default); spark: Spark jobs over a lake": "local: esta máquina, o arquivo do armazenamento (padrão); spark: jobs Spark sobre um lago",
    "with --engine spark: the Spark master (local[N] or spark://host:7077)": "com --engine spark: o master do Spark (local[N] ou spark://host:7077)",
    "with --engine spark: the lake to read and write (default: the global --lake)": "com --engine spark: o lago a ler e escrever (padrão: o --lake global)",
    "pings per vehicle batch, the unit of work (default 150000)": "posições por lote de veículos, a unidade de trabalho (padrão 150000)",
    "with --engine spark: JVM memory per executor (the work runs in Python workers)": "com --engine spark: memória da JVM por executor (o trabalho roda em workers Python)",
    "local: the store file (default); spark: a lake, the period rolled up on DuckDB over its partitions (indices have no per-day step)": "local: o arquivo do armazenamento (padrão); spark: um lago, o período consolidado com DuckDB sobre suas partições (os índices não têm etapa por dia)",
    "YYYY-MM-DD (default: --from)": "AAAA-MM-DD (padrão: --from)",
    "Computes the quality indices of a period from the matched trips, writes `indicators`, `fleet_days`, `annual_grades` (year periods) and `suggested_infractions`, and prints them.": "Calcula os índices de qualidade de um período a partir das viagens casadas, grava `indicators`, `fleet_days`, `annual_grades` (períodos de um ano) e `suggested_infractions`, e os mostra.",
    "YYYY-MM (month), YYYY (year) or YYYY-MM-DD..YYYY-MM-DD": "AAAA-MM (mês), AAAA (ano) ou AAAA-MM-DD..AAAA-MM-DD",
    "last service day (YYYY-MM-DD)": "último dia de serviço (AAAA-MM-DD)",
    "show one scope: system, operator[:ID], lot[:ID] or line[:ID] (default: system and operators)": "mostrar um escopo: system, operator[:ID], lot[:ID] ou line[:ID] (padrão: sistema e operadoras)",
    "print every indicator, not the main ones": "mostrar todos os indicadores, não só os principais",
    "list the trips (and pings) behind a value": "listar as viagens (e posições) por trás de um valor",
    "with --trace: list the pings too": "com --trace: listar também as posições",
    "operating cost per km (R$) for the tariff": "custo operacional por km (R$) para a tarifa",
    "CSV operator_id,month,cost_per_km (R$/km) for the tariff": "CSV operator_id,month,cost_per_km (R$/km) para a tarifa",
    "CSV lat,lon,people,area for stop coverage (CGS art. 4)": "CSV lat,lon,people,area para a cobertura das paradas (CGS art. 4)",
    "CSV scope,scope_id,year,grade of earlier years": "CSV scope,scope_id,year,grade dos anos anteriores",
    "compute and print only": "só calcular e mostrar",
    "Builds the reports of BG Anexo I XLII (semester), art. 62-VII (monthly) and the annual renewal dossier from the store, as PDF (pt-BR), XLSX (one sheet per table) and CSV (one file per table: ';' and decimal commas for pt-BR spreadsheets; csv-raw for machines).": "Gera os relatórios do Anexo I XLII (semestral) e do art. 62-VII (mensal) da lei de Bento Gonçalves e o dossiê anual de renovação a partir do armazenamento, em PDF (pt-BR), XLSX (uma planilha por tabela) e CSV (um arquivo por tabela: ';' e vírgula decimal para planilhas pt-BR; csv-raw para máquinas).",
    "semester report (BG Anexo I XLII)": "relatório semestral (BG Anexo I XLII)",
    "monthly operating report (BG art. 62-VII)": "relatório mensal de operação (BG art. 62-VII)",
    "annual renewal dossier per operator or lot": "dossiê anual de renovação por operadora ou lote",
    "YYYY-1 (January-June) or YYYY-2": "AAAA-1 (janeiro a junho) ou AAAA-2",
    "CSV operator_id,month,item,cost_brl of maintenance costs": "CSV operator_id,month,item,cost_brl dos custos de manutenção",
    "output folder (default: <store folder>/reports)": "pasta de saída (padrão: <pasta do armazenamento>/reports)",
    "who takes the report, for the audit log (default: the system user)": "quem retira o relatório, para o registro de auditoria (padrão: o usuário do sistema)",
    "pdf, xlsx, csv (pt-BR spreadsheets) or csv-raw (machines); repeatable; default: pdf, xlsx and csv": "pdf, xlsx, csv (planilhas pt-BR) ou csv-raw (máquinas); repetível; padrão: pdf, xlsx e csv",
    "YYYY-MM": "AAAA-MM",
    "CSV route_id,month,n_drivers,n_inspectors": "CSV route_id,month,n_drivers,n_inspectors",
    "calendar year": "ano civil",
    "one operator (default: every operator graded)": "uma operadora (padrão: todas as que têm conceito)",
    "one concession lot": "um lote de concessão",
    "TIDES (tides-transit.org) CSV tables with a data-package descriptor, or the store's tables as Hive-partitioned Parquet (zstd) that DuckDB and Spark read.": "Tabelas CSV TIDES (tides-transit.org) com um descritor de pacote de dados, ou as tabelas do armazenamento como Parquet particionado Hive (zstd) que o DuckDB e o Spark leem.",
    "TIDES tables (CSV) and datapackage.json": "tabelas TIDES (CSV) e datapackage.json",
    "the lake: Hive-partitioned Parquet": "o lago: Parquet particionado Hive",
    "the matched days as GTFS-RT VehiclePositions, one FeedMessage per minute (zip)": "os dias casados como VehiclePositions GTFS-RT, um FeedMessage por minuto (zip)",
    "output folder": "pasta de saída",
    "folder of the TIDES table schemas: copy them beside the data and validate": "pasta dos esquemas das tabelas TIDES: copiá-los ao lado dos dados e validar",
    "folder of the lake (created if absent)": "pasta do lago (criada se não existir)",
    "first service day YYYY-MM-DD": "primeiro dia de serviço AAAA-MM-DD",
    "last service day YYYY-MM-DD": "último dia de serviço AAAA-MM-DD",
    "the zip file to write": "o arquivo zip a escrever",
    "write the store's tables to the lake": "gravar as tabelas do armazenamento no lago",
    "Consume the AVL and fare topics (as `pontual listen`, writing the store), keep the live state of every vehicle, and serve GTFS-Realtime VehiclePositions, TripUpdates and Alerts, a JSON stop-arrivals API and /health over HTTP.": "Consome os tópicos AVL e de tarifas (como `pontual listen`, gravando no armazenamento), mantém o estado ao vivo de cada veículo e serve por HTTP as VehiclePositions, TripUpdates e Alerts GTFS-Realtime, uma API JSON de chegadas às paradas e /health.",
    "commit and update every S s (0.25)": "gravar e atualizar a cada S s (0.25)",
    "or every N messages (default 5000)": "ou a cada N mensagens (padrão 5000)",
    "HTTP bind address (127.0.0.1)": "endereço HTTP de escuta (127.0.0.1)",
    "HTTP port (8080)": "porta HTTP (8080)",
    "allowed CORS origin (default: any)": "origem CORS permitida (padrão: qualquer)",
    "service date YYYY-MM-DD (default: today in the feed's zone)": "dia de serviço AAAA-MM-DD (padrão: hoje no fuso do feed)",
    "re-read incidents every S s": "reler os incidentes a cada S s",
    "stop after S seconds (tests, demos)": "parar após S segundos (testes, demonstrações)",
    "Publish every ping of AVL_FILE as one MQTT message on {root}/avl/{operator}/{vehicle}, in event-time order, at --speed times the recorded pace.": "Publica cada posição de AVL_FILE como uma mensagem MQTT em {root}/avl/{operator}/{vehicle}, na ordem dos eventos, a --speed vezes o ritmo gravado.",
    "AVL file (.csv, .parquet, .jsonl; as `ingest`)": "arquivo AVL (.csv, .parquet, .jsonl; como em `ingest`)",
    "times real time (1; 0 = no pause)": "vezes o tempo real (1; 0 = sem pausa)",
    "operator topic level (default: the username, or 'replay')": "nível de tópico da operadora (padrão: o usuário, ou 'replay')",
    "column mapping name or TOML file (as `pontual ingest --map`)": "nome do mapeamento de colunas ou arquivo TOML (como em `pontual ingest --map`)",
    "withhold the reported trip ids": "omitir os ids de viagem informados",
    "publish only the first N pings": "publicar só as N primeiras posições",
    "port (default 8501)": "porta (padrão 8501)",
    "address to listen on": "endereço de escuta",
    "open the dashboard in this machine's browser once it answers (default: only print its address; Streamlit itself always runs headless, so it never stops at its first-run e-mail prompt)": "abrir o painel no navegador desta máquina assim que ele responder (padrão: só mostrar o endereço; o próprio Streamlit roda sempre sem interface, então nunca para no pedido de e-mail da primeira execução)",
    "the default; kept for older scripts": "o padrão; mantido para scripts antigos",
    "serve the public transparency page instead (published aggregates, no login)": "servir a página pública de transparência (agregados publicados, sem login)",
    "folder for the simulated city (default: beside the store)": "pasta da cidade simulada (padrão: ao lado do armazenamento)",
    "days to simulate (default 7)": "dias a simular (padrão 7)",
    "simulator seed": "semente do simulador",
    "run the pipeline and exit": "rodar o pipeline e sair",
    "dashboard port": "porta do painel",
    "write the simulated city into the store of --store / PONTUAL_STORE (default: the demo's own, data/demo/pontual.duckdb)": "gravar a cidade simulada no armazenamento de --store / PONTUAL_STORE (padrão: o da própria demonstração, data/demo/pontual.duckdb)",
    "no live feed (broker, serve, replay) on the side": "sem o feed ao vivo (broker, serve, replay) ao lado",
    "replay at S times real time (10)": "reprodução a S vezes o tempo real (10)",
    "local time of the last simulated day the replay starts at (06:30)": "hora local do último dia simulado em que a reprodução começa (06:30)",
    "compile the matching kernels into the user cache": "compilar as rotinas de casamento no cache do usuário",
    "record that this report reached SEGIMU on that day (its due day is tracked: BG art. "
    "62-VII, Anexo I XLII)": "registrar que este relatório chegou à SEGIMU nesse dia (seu prazo "
    "é acompanhado: BG art. 62-VII, Anexo I XLII)",
    # -- the MQTT consumer's lines (ingest/mqtt.py; `listen`, `serve`) -----------------------
    "connected to {address} (session resumed)": "conectado a {address} (sessão retomada)",
    "connected to {address} (session new)": "conectado a {address} (sessão nova)",
    "subscription refused ({codes})": "assinatura recusada ({codes})",
    "disconnected from the broker ({reason}); will reconnect": (
        "desconectado do broker ({reason}); vai reconectar"
    ),
    "batch {n}: {n_messages} messages, {n_accepted} accepted, {n_duplicate} duplicate, "
    "{n_quarantined} quarantined ({commit_ms} ms)": "lote {n}: {n_messages} mensagens, "
    "{n_accepted} aceitas, {n_duplicate} duplicadas, {n_quarantined} em quarentena "
    "({commit_ms} ms)",
    "broker unreachable ({error}); retrying": "broker inalcançável ({error}); tentando de novo",
    # -- quarantine reasons (stored in English; shown translated by `ingest`, `quarantine`) ----
    "missing {column}": "falta {column}",
    "cannot read {column} as {kind}": "não foi possível ler {column} como {kind}",
    "a time (ISO 8601 with offset, local ISO 8601, or epoch seconds)": (
        "um horário (ISO 8601 com fuso, ISO 8601 local, ou segundos desde 1970)"
    ),
    "a date (YYYY-MM-DD)": "uma data (AAAA-MM-DD)",
    "yes/no": "sim/não",
    "a number": "um número",
    "a whole number": "um número inteiro",
    "vehicle_id not in the fleet register (load it, or pass --accept-unknown-vehicles)": (
        "vehicle_id fora do cadastro da frota (carregue-o, ou passe --accept-unknown-vehicles)"
    ),
    "vehicle of another operator (the fleet register names {registered})": (
        "veículo de outra operadora (o cadastro da frota indica {registered})"
    ),
    "record could not be processed (internal error, see the log)": (
        "o registro não pôde ser processado (erro interno, veja o log)"
    ),
    "{column} before {year}: a clock that was never set": (
        "{column} anterior a {year}: um relógio que nunca foi acertado"
    ),
    "{column} more than {skew_s} s in the future (clock skew allowance)": (
        "{column} mais de {skew_s} s no futuro (tolerância de relógio)"
    ),
    "lat outside -90..90 degrees": "lat fora de -90..90 graus",
    "lon outside -180..180 degrees": "lon fora de -180..180 graus",
    "position 0,0: the device had no GPS fix": "posição 0,0: o aparelho estava sem sinal de GPS",
    "stale fix: more than {age_s} s older than its snapshot": (
        "posição velha: mais de {age_s} s anterior ao seu instantâneo"
    ),
    "speed_m_s outside 0..{max_m_s} m/s": "speed_m_s fora de 0..{max_m_s} m/s",
    "heading_deg outside 0..360": "heading_deg fora de 0..360",
    "reported_direction_id not 0 or 1": "reported_direction_id não é 0 nem 1",
    "position outside the network's area (bounding box of the stops plus {margin_m} m)": (
        "posição fora da área da rede (retângulo das paradas mais {margin_m} m)"
    ),
    "{column} unknown, expected one of {allowed} ({what})": (
        "{column} desconhecido, esperado um de {allowed} ({what})"
    ),
    "fare_class unknown, expected one of {allowed}": (
        "fare_class desconhecida, esperada uma de {allowed}"
    ),
    "amount outside 0..{max_amount}": "amount fora de 0..{max_amount}",
    "manufacture_year outside 1950..{year}": "manufacture_year fora de 1950..{year}",
    "n_seats negative": "n_seats negativo",
    "standing_area_m2 negative": "standing_area_m2 negativo",
    "ends_at before starts_at": "ends_at anterior a starts_at",
    "period not YYYY, YYYY-S1/S2 or YYYY-MM (month 01..12)": (
        "period não é AAAA, AAAA-S1/S2 nem AAAA-MM (mês 01..12)"
    ),
    "period year outside {year}..next year": "ano de period fora de {year}..o próximo ano",
    "score outside {low}..{high} (profile quality.iqs_score_scale)": (
        "score fora de {low}..{high} (perfil quality.iqs_score_scale)"
    ),
    "n_respondents negative": "n_respondents negativo",
    "n_boardings negative": "n_boardings negativo",
    "n_alightings negative": "n_alightings negativo",
    "valid_from before the version in force since {since}: the register's history is only "
    "extended forward (correct the newer version instead)": "valid_from anterior à versão em "
    "vigor desde {since}: o histórico do cadastro só avança (corrija a versão mais nova)",
    "key already stored with different content (conflict): {key}": (
        "chave já gravada com outro conteúdo (conflito): {key}"
    ),
    "not valid JSON: expected one JSON object a line": (
        "JSON inválido: esperava-se um objeto JSON por linha"
    ),
    "not a JSON object: expected one object a line": (
        "não é um objeto JSON: esperava-se um objeto por linha"
    ),
    "topic is not {root}/avl/{operator}/{vehicle} or {root}/fares/{operator}/{vehicle}": (
        "o tópico não é {root}/avl/{operator}/{vehicle} nem {root}/fares/{operator}/{vehicle}"
    ),
    "payload is empty (expected a JSON object)": "mensagem vazia (esperava-se um objeto JSON)",
    "payload larger than {limit} bytes (max_message_bytes)": (
        "mensagem maior que {limit} bytes (max_message_bytes)"
    ),
    "payload is not UTF-8 text (expected a JSON object)": (
        "a mensagem não é texto UTF-8 (esperava-se um objeto JSON)"
    ),
    "payload is not a JSON object with text/number fields": (
        "a mensagem não é um objeto JSON com campos de texto/número"
    ),
    "payload is not a JSON object (expected {...} with the documented fields)": (
        "a mensagem não é um objeto JSON (esperava-se {...} com os campos documentados)"
    ),
    "field longer than {limit} bytes (max_field_bytes)": (
        "campo maior que {limit} bytes (max_field_bytes)"
    ),
    "payload vehicle_id differs from the topic's vehicle": (
        "vehicle_id da mensagem difere do veículo do tópico"
    ),
    "payload operator_id differs from the topic's operator": (
        "operator_id da mensagem difere da operadora do tópico"
    ),
    "message could not be decoded (internal error, see the listener's log)": (
        "a mensagem não pôde ser decodificada (erro interno, veja o log do ouvinte)"
    ),
    # -- errors raised by the verbs ------------------------------------------------------------
    "period ends ({end}) before it starts ({start})": (
        "o período termina ({end}) antes de começar ({start})"
    ),
    "give --to on or after --from": "dê --to igual ou posterior a --from",
    "demo stage '{title}' failed with exit code {code}": (
        "a etapa '{title}' da demonstração falhou com código de saída {code}"
    ),
    "run that command alone with --debug to see why": (
        "rode esse comando sozinho com --debug para ver o motivo"
    ),
    "--to is before --from": "--to é anterior a --from",
    "schema folder not found": "pasta de esquemas não encontrada",
    "give both --from and --to, or neither": "dê --from e --to juntos, ou nenhum dos dois",
    "give the first service day, then the last": "dê o primeiro dia de serviço, depois o último",
    "--from and --to go together": "--from e --to andam juntos",
    "give both service dates": "dê as duas datas de serviço",
    "no period given": "nenhum período informado",
    "e.g. --period 2026-03, --period 2026, or --from 2026-03-01 --to 2026-03-15": (
        "ex.: --period 2026-03, --period 2026, ou --from 2026-03-01 --to 2026-03-15"
    ),
    "give --period or --from/--to, not both": "dê --period ou --from/--to, não os dois",
    "unknown scope {scope}": "escopo desconhecido {scope}",
    "system, operator:O1, lot:L1, line:T10": "system, operator:O1, lot:L1, line:T10",
    "system, operator:ID, lot:ID or line:ID": "system, operator:ID, lot:ID ou line:ID",
    "invalid date: {text}": "data inválida: {text}",
    "nothing to ingest for {kind}": "nada a carregar para {kind}",
    "give FILE... (or --url URL for avl)": "dê ARQUIVO... (ou --url URL para avl)",
    "--limit must be 0 or more": "--limit deve ser 0 ou mais",
    "cannot fetch the feed: all {n} tries failed": (
        "não foi possível buscar o feed: todas as {n} tentativas falharam"
    ),
    "check the URL and the network (each failure is shown above)": (
        "confira a URL e a rede (cada falha aparece acima)"
    ),
    "--to {end} is before --from {start}": "--to {end} é anterior a --from {start}",
    "swap the two dates": "troque as duas datas",
    "no operator has an annual grade for {year}": (
        "nenhuma operadora tem conceito anual para {year}"
    ),
    "run `pontual indices --period {year}` first": "rode `pontual indices --period {year}` antes",
    "invalid --delivered-on {date}: expected YYYY-MM-DD": (
        "--delivered-on inválido {date}: esperado AAAA-MM-DD"
    ),
    "e.g. --delivered-on 2026-04-20": "ex.: --delivered-on 2026-04-20",
    "no GTFS feed loaded: the live engine needs the timetable": (
        "nenhum feed GTFS carregado: o motor ao vivo precisa da tabela horária"
    ),
    "load one with `pontual gtfs load PATH`": "carregue um com `pontual gtfs load CAMINHO`",
    "--date is not a date: {given}": "--date não é uma data: {given}",
    "write it as YYYY-MM-DD, e.g. 2026-03-03": "escreva como AAAA-MM-DD, ex.: 2026-03-03",
    "--vehicles and --ping-interval must be positive": (
        "--vehicles e --ping-interval devem ser positivos"
    ),
    "e.g. --vehicles 40": "ex.: --vehicles 40",
    "--out is a file, not a folder": "--out é um arquivo, não uma pasta",
    "--start must be a date YYYY-MM-DD, got {given}": (
        "--start deve ser uma data AAAA-MM-DD, recebido {given}"
    ),
    "e.g. --start 2026-03-02": "ex.: --start 2026-03-02",
    "--year {year} --days-per-month {days}: expected a year YYYY and 1 to 20 working days a "
    "month": "--year {year} --days-per-month {days}: esperado um ano AAAA e de 1 a 20 dias "
    "úteis por mês",
    "e.g. --year 2026 --days-per-month 1": "ex.: --year 2026 --days-per-month 1",
    "compiling the matching kernels failed at `{command}`": (
        "a compilação dos núcleos de casamento falhou em `{command}`"
    ),
    "run `pontual --debug warm` to see why": "rode `pontual --debug warm` para ver o motivo",
    # -- core/settings.py ------------------------------------------------------------------
    "no card-hashing key": "nenhuma chave de hash de cartões",
    "run `pontual init` or set {name}": "rode `pontual init` ou defina {name}",
    "the card-hashing key file is missing, and this store's cards were hashed with it": (
        "o arquivo da chave de hash de cartões sumiu, e os cartões deste banco foram "
        "hasheados com ela"
    ),
    "restore the key file from the backup (docs/key-rotation.md); a new key would make every "
    "card a new one": "restaure o arquivo da chave a partir do backup (docs/key-rotation.md); "
    "uma chave nova faria de cada cartão um cartão novo",
    "the card-hashing key is {n} bytes; at least {min} are required": (
        "a chave de hash de cartões tem {n} bytes; são exigidos pelo menos {min}"
    ),
    "a key of {n} random bytes, hex-encoded ({chars} characters), e.g. from `pontual init`": (
        "uma chave de {n} bytes aleatórios, em hexadecimal ({chars} caracteres), ex.: de "
        "`pontual init`"
    ),
    "--store is empty": "--store está vazio",
    "give the store file's path": "dê o caminho do arquivo do banco",
    "{name}={years} is shorter than the longest legal horizon ({n} years: cassação, BG art. "
    "72-VII)": "{name}={years} é menor que o maior prazo legal ({n} anos: cassação, BG art. "
    "72-VII)",
    "use {n} or more": "use {n} ou mais",
    "the card-hashing key file can be read by others (mode {mode})": (
        "o arquivo da chave de hash de cartões pode ser lido por outros (modo {mode})"
    ),
    "chmod 600 {path}": "chmod 600 {path}",
    "{name} must be a whole number of years": "{name} deve ser um número inteiro de anos",
    "{name} must be hex": "{name} deve estar em hexadecimal",
    "e.g. 64 hex characters (32 bytes)": "ex.: 64 caracteres hexadecimais (32 bytes)",
    "the card-hashing key file is corrupt (expected hex text)": (
        "o arquivo da chave de hash de cartões está corrompido (esperado texto hexadecimal)"
    ),
    "restore it from the backup (see docs/key-rotation.md)": (
        "restaure-o a partir do backup (veja docs/key-rotation.md)"
    ),
    # -- core/store.py ---------------------------------------------------------------------
    "cannot open the store: {text}": "não foi possível abrir o banco: {text}",
    "the store is open for writing by another process": (
        "o banco está aberto para escrita por outro processo"
    ),
    "the store is open for writing by another process (PID {pid})": (
        "o banco está aberto para escrita por outro processo (PID {pid})"
    ),
    "one process writes the store at a time: wait for it or stop it (`pontual listen`/`serve` "
    "hold it while running); readers use the snapshot": "um processo escreve no banco por vez: "
    "espere-o ou encerre-o (`pontual listen`/`serve` o seguram enquanto rodam); leitores usam "
    "o snapshot",
    "the store file is damaged or is not a Pontual store (not a DuckDB database)": (
        "o arquivo do banco está danificado ou não é um banco do Pontual (não é DuckDB)"
    ),
    "restore the store from the backup, or give the right --store path": (
        "restaure o banco a partir do backup, ou dê o caminho certo em --store"
    ),
    "no permission to open the store file": "sem permissão para abrir o arquivo do banco",
    "run as the store's owner, or check the file's permissions": (
        "rode como dono do banco, ou confira as permissões do arquivo"
    ),
    "no published snapshot of the store": "nenhum snapshot publicado do banco",
    "run a pipeline command (e.g. `pontual demo --no-serve`) to publish one": (
        "rode um comando do pipeline (ex.: `pontual demo --no-serve`) para publicar um"
    ),
    "store not found": "banco não encontrado",
    "run `pontual demo` or `pontual init` first": "rode `pontual demo` ou `pontual init` antes",
    "the store path is a folder": "o caminho do banco é uma pasta",
    "store schema version {current} is newer than this Pontual ({version}) knows (up to "
    "{latest})": "a versão de esquema {current} do banco é mais nova do que este Pontual "
    "({version}) conhece (até {latest})",
    "upgrade Pontual to open this store": "atualize o Pontual para abrir este banco",
    "the store is open read-only": "o banco está aberto só para leitura",
    "the card-hashing key is not the one this store's cards were hashed with": (
        "a chave de hash de cartões não é a usada nos cartões deste banco"
    ),
    "use the store's key file (or PONTUAL_HASH_KEY) from the backup; to change keys see "
    "docs/key-rotation.md": "use o arquivo de chave do banco (ou PONTUAL_HASH_KEY) do backup; "
    "para trocar de chave veja docs/key-rotation.md",
    "store schema version {current} is older than {latest}": (
        "a versão de esquema {current} do banco é anterior a {latest}"
    ),
    "open it once with a writing command (e.g. `pontual init`) to migrate it": (
        "abra-o uma vez com um comando que escreve (ex.: `pontual init`) para migrá-lo"
    ),
    "cannot create the store's folder: {text}": "não foi possível criar a pasta do banco: {text}",
    "check the path given with --store (or PONTUAL_STORE)": (
        "confira o caminho dado em --store (ou PONTUAL_STORE)"
    ),
    # -- core/profile.py ---------------------------------------------------------------------
    "unknown profile {name}": "perfil desconhecido {name}",
    "shipped profiles: {names}; or give a path to a .toml file": (
        "perfis incluídos: {names}; ou dê o caminho de um arquivo .toml"
    ),
    "profile file not found": "arquivo de perfil não encontrado",
    "not valid TOML: {text}": "TOML inválido: {text}",
    "not a text file: a profile is TOML in UTF-8": (
        "não é um arquivo de texto: um perfil é TOML em UTF-8"
    ),
    "see `pontual profiles show bento-goncalves-2021` for a complete example": (
        "veja `pontual profiles show bento-goncalves-2021` para um exemplo completo"
    ),
    "key {key}: missing key": "chave {key}: chave ausente",
    "key {key}: unknown key": "chave {key}: chave desconhecida",
    # -- core/periods.py -------------------------------------------------------------------
    "invalid period {text}: expected {expected}": "período inválido {text}: esperado {expected}",
    "give --from YYYY-MM-DD --to YYYY-MM-DD with --to on or after --from": (
        "dê --from AAAA-MM-DD --to AAAA-MM-DD com --to igual ou posterior a --from"
    ),
    "invalid semester {text}: expected YYYY-1 (January-June) or YYYY-2 (July-December)": (
        "semestre inválido {text}: esperado AAAA-1 (janeiro-junho) ou AAAA-2 (julho-dezembro)"
    ),
    "e.g. --half 2026-1": "ex.: --half 2026-1",
    "invalid period {text}: {why}": "período inválido {text}: {why}",
    "expected {expected}": "esperado {expected}",
    "YYYY-MM (month), YYYY (year), YYYY-S1/YYYY-S2 (semester), YYYY-MM-DD (day) or "
    "YYYY-MM-DD..YYYY-MM-DD (range)": "AAAA-MM (mês), AAAA (ano), AAAA-S1/AAAA-S2 (semestre), "
    "AAAA-MM-DD (dia) ou AAAA-MM-DD..AAAA-MM-DD (intervalo)",
    # -- gtfs/read.py and the feed's refusal ---------------------------------------------------
    "GTFS feed not found": "feed GTFS não encontrado",
    "give a .zip file or a folder of .txt": "dê um arquivo .zip ou uma pasta de .txt",
    "not a GTFS feed: expected a zip archive or a folder of .txt files": (
        "não é um feed GTFS: esperado um arquivo zip ou uma pasta de arquivos .txt"
    ),
    "check that the download completed; a GTFS feed is a .zip of CSV .txt files": (
        "confira se o download terminou; um feed GTFS é um .zip de arquivos CSV .txt"
    ),
    "{name} unpacks to more than {ratio} times its compressed size ({n} bytes compressed): "
    "refused as a zip bomb": "{name} descompacta para mais de {ratio} vezes seu tamanho "
    "compactado ({n} bytes compactados): recusado como bomba zip",
    "a GTFS feed compresses 5 to 30 times; re-export the feed": (
        "um feed GTFS compacta de 5 a 30 vezes; exporte o feed de novo"
    ),
    "{name} unpacks to more than {limit} MiB (at least {size} MiB): refused": (
        "{name} descompacta para mais de {limit} MiB (pelo menos {size} MiB): recusado"
    ),
    "the feed's files unpack to more than {limit} MiB (at least {size} MiB): refused": (
        "os arquivos do feed descompactam para mais de {limit} MiB (pelo menos {size} MiB): "
        "recusado"
    ),
    "a GTFS feed this large is not expected; check the archive (a zip bomb?)": (
        "um feed GTFS deste tamanho não é esperado; confira o arquivo (uma bomba zip?)"
    ),
    "cannot read the zip archive: {text}": "não foi possível ler o arquivo zip: {text}",
    "the zip archive holds a member named {name}, outside its own folder (path traversal): "
    "refused": "o arquivo zip contém um membro chamado {name}, fora da sua própria pasta "
    "(travessia de caminho): recusado",
    "a GTFS feed's files are plain names (stops.txt, trips.txt...); re-export the feed from "
    "its source": "os arquivos de um feed GTFS têm nomes simples (stops.txt, trips.txt...); "
    "exporte o feed de novo a partir da origem",
    "GTFS feed refused, {n} error(s): {issues}": "feed GTFS recusado, {n} erro(s): {issues}",
    "run `pontual gtfs validate PATH` for the full list; fix the feed and load it again": (
        "rode `pontual gtfs validate CAMINHO` para a lista completa; corrija o feed e "
        "carregue-o de novo"
    ),
    "no GTFS feed in force on {date}": "nenhum feed GTFS em vigor em {date}",
    "load a feed that covers this date with `pontual gtfs load PATH`": (
        "carregue um feed que cubra esta data com `pontual gtfs load CAMINHO`"
    ),
    # -- ingest/ (files, mappings, readers, brokers) ---------------------------------------------
    "file not found": "arquivo não encontrado",
    "a folder, not a file": "uma pasta, não um arquivo",
    "mapping {name} is for {kind}, not {other}": "o mapeamento {name} é para {kind}, não {other}",
    "unknown file format {suffix}": "formato de arquivo desconhecido {suffix}",
    "expected .csv, .parquet, .jsonl, .json (Olho Vivo), .pb (GTFS-RT) or .gpx": (
        "esperado .csv, .parquet, .jsonl, .json (Olho Vivo), .pb (GTFS-RT) ou .gpx"
    ),
    "not a readable GPX file: {text}": "arquivo GPX ilegível: {text}",
    "give `ingest avl` the VehiclePositions feed of the same source (TripUpdates are the "
    "vendor's predictions; `pontual serve` publishes Pontual's own)": "dê a `ingest avl` o "
    "feed VehiclePositions da mesma fonte (TripUpdates são as previsões do fornecedor; "
    "`pontual serve` publica as do próprio Pontual)",
    "mapping {name} gives no column for {columns}": (
        "o mapeamento {name} não dá coluna para {columns}"
    ),
    'add {column} = "<source column>" under [columns] in the mapping': (
        'acrescente {column} = "<coluna de origem>" em [columns] no mapeamento'
    ),
    "mapping {name} not found": "mapeamento {name} não encontrado",
    "shipped mappings: {names}; or give the path of a .toml mapping": (
        "mapeamentos incluídos: {names}; ou dê o caminho de um mapeamento .toml"
    ),
    "mapping kind {kind} unknown, expected one of {kinds}": (
        "tipo de mapeamento {kind} desconhecido, esperado um de {kinds}"
    ),
    "the file lacks the column(s) {missing} that mapping {name} reads": (
        "faltam ao arquivo a(s) coluna(s) {missing} que o mapeamento {name} lê"
    ),
    "its columns are {columns}; pick another --map or fix the mapping": (
        "suas colunas são {columns}; escolha outro --map ou corrija o mapeamento"
    ),
    "mapping is not valid TOML: {text}": "o mapeamento não é TOML válido: {text}",
    "mapping key {key}: {text}": "chave do mapeamento {key}: {text}",
    "see ingest/README.md for the mapping format": (
        "veja ingest/README.md para o formato do mapeamento"
    ),
    "the MQTT broker refused the connection: {text}": "o broker MQTT recusou a conexão: {text}",
    "check --username/--password, the password file and the ACL": (
        "confira --username/--password, o arquivo de senhas e a ACL"
    ),
    "cannot reach the MQTT broker: {text}": "não foi possível alcançar o broker MQTT: {text}",
    "the broker's certificate must be signed by the CA of --tls-ca and name --host (or pass "
    "--tls-insecure to skip the name check)": "o certificado do broker deve ser assinado pela "
    "AC de --tls-ca e nomear --host (ou passe --tls-insecure para pular a conferência do nome)",
    "check --host/--port, that Mosquitto is running, and the TLS options": (
        "confira --host/--port, se o Mosquitto está rodando, e as opções de TLS"
    ),
    "the MQTT broker did not answer the connection in time": (
        "o broker MQTT não respondeu à conexão a tempo"
    ),
    "check that the port is an MQTT listener (TLS port needs --tls-ca)": (
        "confira se a porta é de um listener MQTT (porta TLS precisa de --tls-ca)"
    ),
    "the MQTT broker closed the connection": "o broker MQTT fechou a conexão",
    "the MQTT broker closed the connection before answering": (
        "o broker MQTT fechou a conexão antes de responder"
    ),
    "check the credentials and the broker log": "confira as credenciais e o log do broker",
    "if the port is a TLS listener, give --tls-ca (the CA that signed the broker's "
    "certificate); else check the credentials and the broker log": "se a porta é de um "
    "listener TLS, dê --tls-ca (a AC que assinou o certificado do broker); senão confira as "
    "credenciais e o log do broker",
    "listener option {field}: {text}": "opção do listener {field}: {text}",
    "see `pontual listen --help` for the accepted values": (
        "veja `pontual listen --help` para os valores aceitos"
    ),
    "not an Olho Vivo /Posicao snapshot": "não é um instantâneo /Posicao do Olho Vivo",
    "snapshot without any readable fix time (ta)": (
        "instantâneo sem nenhum horário de posição legível (ta)"
    ),
    "not valid JSON: {text}": "JSON inválido: {text}",
    "snapshot time hr={hr} is not HH:MM": "o horário do instantâneo hr={hr} não é HH:MM",
    "ingest option {field}: {text}": "opção de carga {field}: {text}",
    "see `pontual ingest --help` for the accepted ranges": (
        "veja `pontual ingest --help` para as faixas aceitas"
    ),
    "cannot read as Parquet: {text}": "não foi possível ler como Parquet: {text}",
    "expected an Apache Parquet file": "esperado um arquivo Apache Parquet",
    "the first line is longer than {n} MiB: not a header line": (
        "a primeira linha tem mais de {n} MiB: não é uma linha de cabeçalho"
    ),
    "expected a comma-separated file whose first line names the columns": (
        "esperado um arquivo separado por vírgulas cuja primeira linha nomeia as colunas"
    ),
    "expected one JSON object a line, a JSON array of objects, or one object": (
        "esperado um objeto JSON por linha, um array JSON de objetos, ou um objeto"
    ),
    "JSON document larger than {n} MiB": "documento JSON maior que {n} MiB",
    "write large files as JSON lines (.jsonl, one object a line)": (
        "grave arquivos grandes como JSON lines (.jsonl, um objeto por linha)"
    ),
    "JSON document is a {type}, not records": "o documento JSON é um {type}, não registros",
    "expected an array of objects, one per record": "esperado um array de objetos, um por registro",
    "cannot read as CSV: {text}": "não foi possível ler como CSV: {text}",
    "expected a comma-separated file with a header line": (
        "esperado um arquivo separado por vírgulas com linha de cabeçalho"
    ),
    "cannot read the header line as CSV: {text}": (
        "não foi possível ler a linha de cabeçalho como CSV: {text}"
    ),
    "cannot read as JSON lines: {text}": "não foi possível ler como JSON lines: {text}",
    "not UTF-8 text: the file ends in the middle of a character (truncated?)": (
        "não é texto UTF-8: o arquivo termina no meio de um caractere (truncado?)"
    ),
    "JSON object with no single array of records (keys: {keys})": (
        "objeto JSON sem um único array de registros (chaves: {keys})"
    ),
    "expected one JSON object a line, a JSON array of objects, or one object holding one "
    "array of objects": "esperado um objeto JSON por linha, um array JSON de objetos, ou um "
    "objeto com um array de objetos",
    "not a GTFS-Realtime FeedMessage: {text}": "não é um FeedMessage GTFS-Realtime: {text}",
    "expected protobuf bytes of a GTFS-RT feed (VehiclePositions, TripUpdates)": (
        "esperados bytes protobuf de um feed GTFS-RT (VehiclePositions, TripUpdates)"
    ),
    "GTFS-Realtime feed without a header": "feed GTFS-Realtime sem cabeçalho",
    "is this a GTFS-RT feed?": "isto é um feed GTFS-RT?",
    # -- analytics/ -------------------------------------------------------------------------
    "no trip outcomes between {start} and {end}": (
        "nenhum resultado de viagem entre {start} e {end}"
    ),
    "run `pontual match` for those days first (or choose another --period)": (
        "rode `pontual match` para esses dias antes (ou escolha outro --period)"
    ),
    "indicator {indicator} is not traced to trips": (
        "o indicador {indicator} não é rastreado até as viagens"
    ),
    "traceable: {names}": "rastreáveis: {names}",
    "cannot read the {what} CSV: {text}": "não foi possível ler o CSV de {what}: {text}",
    "the {what} CSV lacks the column(s) {missing}; expected {header}": (
        "falta(m) ao CSV de {what} a(s) coluna(s) {missing}; esperado {header}"
    ),
    "first line of the file: {header}": "primeira linha do arquivo: {header}",
    "header: {header}": "cabeçalho: {header}",
    "{what} file not found": "arquivo de {what} não encontrado",
    "invalid {field} {value} in the {what} CSV: expected {expected}": (
        "{field} inválido {value} no CSV de {what}: esperado {expected}"
    ),
    "{n} line(s) with this problem; header: {header}": (
        "{n} linha(s) com este problema; cabeçalho: {header}"
    ),
    "repeated {key} in the {what} CSV: {values} appears more than once": (
        "{key} repetido no CSV de {what}: {values} aparece mais de uma vez"
    ),
    "give one line per {key}": "dê uma linha por {key}",
    "staff": "pessoal",
    "maintenance-cost": "custo de manutenção",
    "a non-empty id": "um identificador não vazio",
    "a non-empty text": "um texto não vazio",
    "a month YYYY-MM": "um mês AAAA-MM",
    "a whole number >= 0": "um número inteiro >= 0",
    "an amount in reais >= 0 (decimal point, e.g. 1234.50)": (
        "um valor em reais >= 0 (ponto decimal, ex.: 1234.50)"
    ),
    "invalid month {month}: expected YYYY-MM": "mês inválido {month}: esperado AAAA-MM",
    "e.g. --month 2026-03": "ex.: --month 2026-03",
    "unknown scope {scope}: expected operator or lot": (
        "escopo desconhecido {scope}: esperado operator ou lot"
    ),
    "no indices of {scope} {scope_id} in {year} in the store": (
        "nenhum índice de {scope} {scope_id} em {year} no banco"
    ),
    "run `pontual indices --period {year}` (and each month) first": (
        "rode `pontual indices --period {year}` (e cada mês) antes"
    ),
    "cannot read the cost-per-km CSV: {text}": "não foi possível ler o CSV de custo por km: {text}",
    "cost-per-km CSV lacks columns {missing}; expected {expected}": (
        "faltam ao CSV de custo por km as colunas {missing}; esperado {expected}"
    ),
    "invalid {field} {value} in the cost-per-km CSV: expected {expected}": (
        "{field} inválido {value} no CSV de custo por km: esperado {expected}"
    ),
    "a cost >= 0": "um custo >= 0",
    "cannot read the population CSV: {text}": "não foi possível ler o CSV de população: {text}",
    "population CSV lacks columns {missing}; expected {expected}": (
        "faltam ao CSV de população as colunas {missing}; esperado {expected}"
    ),
    "invalid {field} {value} in the population CSV: expected {expected}": (
        "{field} inválido {value} no CSV de população: esperado {expected}"
    ),
    "cannot read the grade history CSV: {text}": (
        "não foi possível ler o CSV do histórico de conceitos: {text}"
    ),
    "grade history lacks columns {missing}; expected {expected}": (
        "faltam ao histórico de conceitos as colunas {missing}; esperado {expected}"
    ),
    "lake not found": "lago de dados não encontrado",
    "--lake goes with --engine spark (the local engine writes the store file)": "--lake só vale com --engine spark (o motor local escreve o arquivo do armazenamento)",
    "add --engine spark": "acrescente --engine spark",
    "the spark engine reads and writes a Parquet lake: --lake is missing": "o motor spark lê e escreve um lago Parquet: falta --lake",
    "write the lake with `pontual export parquet --lake PATH` and pass --lake PATH": "escreva o lago com `pontual export parquet --lake PATH` e passe --lake PATH",
    "write one with `pontual export parquet --lake PATH`": "escreva um com `pontual export parquet --lake PATH`",
    "write one with `pontual lake export --lake PATH`": (
        "grave um com `pontual lake export --lake CAMINHO`"
    ),
    # -- success and progress lines of the verbs ------------------------------------------
    "feed {feed_id} is already loaded (same content): nothing to do": (
        "o feed {feed_id} já está carregado (mesmo conteúdo): nada a fazer"
    ),
    "loaded feed {feed_id} (valid {start} to {end}, EPSG:{epsg}): {counts}": (
        "feed {feed_id} carregado (vigente de {start} a {end}, EPSG:{epsg}): {counts}"
    ),
    "scheduled trips {start} to {end}: {n}": "viagens programadas de {start} a {end}: {n}",
    "{n} warning(s); {seconds} s": "{n} aviso(s); {seconds} s",
    "no loaded feed covers {start} to {end}: nothing scheduled": (
        "nenhum feed carregado cobre {start} a {end}: nada programado"
    ),
    "feed {feed_id}: {n} scheduled trips": "feed {feed_id}: {n} viagens programadas",
    "listening on {topics} (client id {client_id})": (
        "escutando {topics} (id do cliente {client_id})"
    ),
    "stopped: {n_messages} messages in {n_batches} batches, {n_accepted} accepted, "
    "{n_duplicate} duplicate, {n_quarantined} quarantined": "encerrado: {n_messages} mensagens "
    "em {n_batches} lotes, {n_accepted} aceitas, {n_duplicate} duplicadas, {n_quarantined} em "
    "quarentena",
    "store {path} at schema version {version}": "banco {path} na versão de esquema {version}",
    "simulated {n_days} day(s), {n_routes} lines, {n_vehicles} vehicles in the register, "
    "{n_trips} scheduled trips ({outcomes}), {n_pings} pings, {n_taps} fare taps in {seconds} s "
    "-> {folder} (see README.md there)": "simulado(s) {n_days} dia(s), {n_routes} linhas, "
    "{n_vehicles} veículos no cadastro, {n_trips} viagens programadas ({outcomes}), {n_pings} "
    "posições, {n_taps} validações em {seconds} s -> {folder} (veja o README.md lá)",
    "live update failed: {error}": "falha na atualização ao vivo: {error}",
    "live refresh failed: {error}": "falha ao renovar a visão ao vivo: {error}",
    "serving http://{host}:{port}/gtfs-rt/vehicle-positions.pb (trip-updates.pb, alerts.pb, "
    "/api/stops/<id>/arrivals, /health); listening on {topics}": "servindo "
    "http://{host}:{port}/gtfs-rt/vehicle-positions.pb (trip-updates.pb, alerts.pb, "
    "/api/stops/<id>/arrivals, /health); escutando {topics}",
    "stopped: {n_messages} messages, {n_accepted} accepted, {n_duplicate} duplicate, "
    "{n_quarantined} quarantined; {n_updates} live updates": "encerrado: {n_messages} "
    "mensagens, {n_accepted} aceitas, {n_duplicate} duplicadas, {n_quarantined} em quarentena; "
    "{n_updates} atualizações ao vivo",
    # -- GTFS findings (gtfs/read.py, validate.py, geography.py; shown by `print_issues`) ----
    "looks like UTF-16 but cannot be decoded; expected UTF-8 text": (
        "parece UTF-16 mas não pode ser decodificado; esperava-se texto UTF-8"
    ),
    "file is UTF-16; decoded (GTFS files should be UTF-8)": (
        "arquivo em UTF-16; decodificado (arquivos GTFS devem ser UTF-8)"
    ),
    "file is not UTF-8; decoded as Latin-1 (ISO-8859-1) — check accented names": (
        "o arquivo não é UTF-8; decodificado como Latin-1 (ISO-8859-1) — confira os nomes "
        "acentuados"
    ),
    "invalid UTF-8 byte {byte} (and not Latin-1 text either); expected UTF-8 text": (
        "byte UTF-8 inválido {byte} (e também não é texto Latin-1); esperava-se texto UTF-8"
    ),
    "NUL byte in the text; expected plain text": "byte NUL no texto; esperava-se texto simples",
    "stray carriage return (bad line ending); read as a line break": (
        "retorno de carro avulso (fim de linha inválido); lido como quebra de linha"
    ),
    "mixed line endings (CRLF and LF)": "fins de linha misturados (CRLF e LF)",
    "no header line; expected comma-separated column names": (
        "sem linha de cabeçalho; esperavam-se nomes de colunas separados por vírgula"
    ),
    "column named twice in the header": "coluna nomeada duas vezes no cabeçalho",
    "header has an empty column name; that column is ignored": (
        "o cabeçalho tem um nome de coluna vazio; essa coluna é ignorada"
    ),
    "cannot be read as CSV: {error}": "não pode ser lido como CSV: {error}",
    "{n} cells where the header has {n_header}; extra cells ignored": (
        "{n} células onde o cabeçalho tem {n_header}; as células a mais são ignoradas"
    ),
    "{n} row(s) have fewer cells than the header's {n_header} (first here); missing cells read "
    "as empty": "{n} linha(s) com menos células que as {n_header} do cabeçalho (a primeira "
    "aqui); células ausentes lidas como vazias",
    "{n} blank line(s) skipped": "{n} linha(s) em branco ignorada(s)",
    "and {n} more rows with the same problem": "e mais {n} linhas com o mesmo problema",
    "required column missing from the header": "coluna obrigatória ausente do cabeçalho",
    "required value missing": "valor obrigatório ausente",
    "'{value}' is not {expected}": "'{value}' não é {expected}",
    "an integer": "um número inteiro",
    "a decimal number": "um número decimal",
    "a time H:MM:SS (hours may pass 24)": "um horário H:MM:SS (as horas podem passar de 24)",
    "a date YYYYMMDD": "uma data AAAAMMDD",
    "'{value}' out of range; expected {bounds}": "'{value}' fora do intervalo; esperado {bounds}",
    "between {low} and {high}": "entre {low} e {high}",
    "at least {low}": "no mínimo {low}",
    "a 32-bit integer": "um inteiro de 32 bits",
    "{n} midnight wrap(s) inside trips (first here); times after midnight read as 24:xx+": (
        "{n} virada(s) de meia-noite dentro de viagens (a primeira aqui); horários depois da "
        "meia-noite lidos como 24:xx+"
    ),
    "required file missing from the feed": "arquivo obrigatório ausente do feed",
    "file is empty; expected a header line and rows": (
        "arquivo vazio; esperavam-se uma linha de cabeçalho e linhas de dados"
    ),
    "file has a header but no rows": "o arquivo tem cabeçalho mas nenhuma linha",
    "neither calendar.txt nor calendar_dates.txt in the feed; one is required": (
        "nem calendar.txt nem calendar_dates.txt no feed; um dos dois é obrigatório"
    ),
    "duplicate {label} '{value}'; each must be unique": (
        "{label} '{value}' duplicado; cada um deve ser único"
    ),
    "'{value}' is not defined in {what}": "'{value}' não está definido em {what}",
    "calendar.txt or calendar_dates.txt": "calendar.txt ou calendar_dates.txt",
    "'{value}' is not an IANA time zone (e.g. America/Sao_Paulo)": (
        "'{value}' não é um fuso horário IANA (ex.: America/Sao_Paulo)"
    ),
    "agencies with different time zones; all must share one": (
        "agências com fusos horários diferentes; todas devem ter o mesmo"
    ),
    "agency_id missing; required when the feed has several agencies": (
        "agency_id ausente; obrigatório quando o feed tem várias agências"
    ),
    "column required when the feed has several agencies": (
        "coluna obrigatória quando o feed tem várias agências"
    ),
    "shape_id given but shapes.txt is missing; shapes are built from the stop sequences": (
        "shape_id informado mas falta shapes.txt; os traçados são construídos pelas sequências "
        "de paradas"
    ),
    "no shapes.txt; each trip's shape is built from its stop sequence (planned km are then "
    "straight lines between stops)": "sem shapes.txt; o traçado de cada viagem é construído "
    "pela sua sequência de paradas (a km programada é então a soma de retas entre paradas)",
    "{n} trip(s) without shape_id (first here); their shape is built from the stop sequence": (
        "{n} viagem(ns) sem shape_id (a primeira aqui); o traçado é construído pela sequência "
        "de paradas"
    ),
    "departure_time missing where arrival_time is given; expected both or neither": (
        "departure_time ausente onde arrival_time foi informado; esperavam-se os dois ou nenhum"
    ),
    "arrival_time missing where departure_time is given; expected both or neither": (
        "arrival_time ausente onde departure_time foi informado; esperavam-se os dois ou nenhum"
    ),
    "first and last stop of a trip must have times; this one has none": (
        "a primeira e a última parada de uma viagem devem ter horários; esta não tem"
    ),
    "trip '{value}' has fewer than two stop times; expected at least two timed stops": (
        "a viagem '{value}' tem menos de dois horários de parada; esperavam-se ao menos duas "
        "paradas com horário"
    ),
    "departure_time before arrival_time": "departure_time anterior a arrival_time",
    "time earlier than at the previous stop of the trip; expected times that never decrease "
    "along stop_sequence": "horário anterior ao da parada precedente da viagem; os horários não "
    "podem diminuir ao longo de stop_sequence",
    "{n} trip(s) without stop times (first here); they are not scheduled": (
        "{n} viagem(ns) sem horários de parada (a primeira aqui); não são programadas"
    ),
    "stop used by stop_times has no coordinates": "parada usada em stop_times sem coordenadas",
    "coordinates out of range (latitude -90..90, longitude -180..180, not 0,0)": (
        "coordenadas fora do intervalo (latitude -90..90, longitude -180..180, não 0,0)"
    ),
    "unused stop with coordinates out of range": (
        "parada não usada com coordenadas fora do intervalo"
    ),
    "stop '{value}' is not used by any trip": "a parada '{value}' não é usada por nenhuma viagem",
    "stops {ids} are at the same place (duplicate stop?)": (
        "as paradas {ids} estão no mesmo lugar (parada duplicada?)"
    ),
    "end_date before start_date": "end_date anterior a start_date",
    "end_time not after start_time": "end_time não é posterior a start_time",
    "shape '{value}' has fewer than two points; it is rebuilt from the stops": (
        "o traçado '{value}' tem menos de dois pontos; é reconstruído pelas paradas"
    ),
    "stop '{value}' is {place}: coordinates a device or export wrote by mistake": (
        "a parada '{value}' está {place}: coordenadas que um aparelho ou uma exportação gravou "
        "por engano"
    ),
    "a point of shape '{value}' is {place}: coordinates written by mistake": (
        "um ponto do traçado '{value}' está {place}: coordenadas gravadas por engano"
    ),
    "near (0,0)": "perto de (0,0)",
    "near a pole": "perto de um polo",
    "stop '{value}' lies far from the network, and inside it once stop_lat and stop_lon are "
    "swapped: latitude and longitude look swapped": "a parada '{value}' fica longe da rede, e "
    "dentro dela quando stop_lat e stop_lon são trocados: latitude e longitude parecem trocadas",
    "stop '{stop}' is {dist_km} km from the nearest other stop of the feed (more than {max_km} "
    "km), too far to reach in its trips' times: misplaced?": "a parada '{stop}' está a "
    "{dist_km} km da parada mais próxima do feed (mais de {max_km} km), longe demais para ser "
    "alcançada nos horários das suas viagens: mal posicionada?",
    "the used stops span {width_km} km × {height_km} km (more than {max_km} km): not one city's "
    "network; the network's extent (AVL position check) leaves out {n} stop(s) far from the "
    "rest": "as paradas usadas cobrem {width_km} km × {height_km} km (mais de {max_km} km): não "
    "é a rede de uma cidade; a área da rede (conferência das posições AVL) deixa de fora {n} "
    "parada(s) longe das demais",
    "stop '{stop}' is {dist_m} m from shape '{shape}' of trip '{trip}' (more than {max_m} m): "
    "the stop or the shape is misplaced": "a parada '{stop}' está a {dist_m} m do traçado "
    "'{shape}' da viagem '{trip}' (mais de {max_m} m): a parada ou o traçado está mal "
    "posicionado",
    "no service date in the feed": "nenhum dia de serviço no feed",
    "GTFS issues": "problemas no GTFS",
    "severity": "gravidade",
    "file": "arquivo",
    "line": "linha",
    "column": "coluna",
    "message": "mensagem",
    "error": "erro",
    "warning": "aviso",
    "... and {n} more (`pontual gtfs validate --all`)": (
        "... e mais {n} (`pontual gtfs validate --all`)"
    ),
    "{n_errors} error(s), {n_warnings} warning(s) in {seconds} s": (
        "{n_errors} erro(s), {n_warnings} aviso(s) em {seconds} s"
    ),
    "matching": "casando",
    "id": "id",
    "name": "nome",
    "effective from": "vigente desde",
    "values": "valores",
    "defaults (to be fixed by decree)": "padrões (a fixar por decreto)",
    "({id}, version {version}, in force from {start})": (
        "({id}, versão {version}, em vigor desde {start})"
    ),
    "key": "chave",
    "value": "valor",
    "unit": "unidade",
    "group": "grupo",
    "item": "item",
    "description": "descrição",
    "penalty": "penalidade",
    "URM 1st": "URM 1ª vez",
    "URM repeat": "URM reincidência",
    # -- verbs' errors first written in pt-BR, now English ids ---------------------------------
    "--speed must be 0 or more": "--speed deve ser 0 ou mais",
    "e.g. --speed 10": "ex.: --speed 10",
    "no position with a vehicle, a time and coordinates": (
        "nenhuma posição com veículo, horário e coordenadas"
    ),
    "check the columns (vehicle_id, event_at, lat, lon) or use --map": (
        "confira as colunas (vehicle_id, event_at, lat, lon) ou use --map"
    ),
    "cannot connect to the broker {address}: {text}": (
        "não foi possível conectar ao broker {address}: {text}"
    ),
    "start Mosquitto or correct the address": "inicie o Mosquitto ou corrija o endereço",
    "HTTP port {port} on {host} is not free ({why})": (
        "a porta HTTP {port} em {host} não está livre ({why})"
    ),
    "choose another port with --http-port, or stop the process using it": (
        "escolha outra porta com --http-port, ou encerre quem a usa"
    ),
    "no terminal to ask for the password": "sem terminal para pedir a senha",
    "use --password-stdin and send the password on stdin": (
        "use --password-stdin e envie a senha pela stdin"
    ),
    "the passwords do not match": "as senhas não conferem",
    "accounts exist already: say who creates this one with --by": (
        "já existem contas: diga quem cria esta com --by"
    ),
    "a planning account (see `pontual users list`)": (
        "uma conta de planejamento (veja `pontual users list`)"
    ),
    "--limit must be 1 or more": "--limit deve ser 1 ou mais",
    "the demo does not write the simulated city into {store} without --into-store": (
        "a demonstração não grava a cidade simulada em {store} sem --into-store"
    ),
    "run `pontual demo` without --store (it uses {store}) or add --into-store": (
        "rode `pontual demo` sem --store (usa {store}) ou acrescente --into-store"
    ),
    "folder {folder} exists and was not made by the demo: it will not be overwritten": (
        "a pasta {folder} existe e não foi criada pela demonstração: não será sobrescrita"
    ),
    "choose another folder with --sample FOLDER": "escolha outra pasta com --sample PASTA",
    "the TIDES export does not validate: {text}": "a exportação TIDES não valida: {text}",
    "no case for suggestion {ref}": "não há caso para a sugestão {ref}",
    "record it as a case or dismiss it first": "lavre-a ou descarte-a antes",
    # -- ingest: per-file summary ---------------------------------------------------------
    "{name}: {n_read} read, {n_accepted} stored, {n_duplicate} duplicate, "
    "{n_quarantined} quarantined": "{name}: {n_read} lidos, {n_accepted} aceitos, "
    "{n_duplicate} duplicados, {n_quarantined} em quarentena",
    "warning: {text}": "aviso: {text}",
    "reason": "motivo",
    "records": "registros",
    "example": "exemplo",
    "record {key}": "registro {key}",
    "quarantined in {name}, by reason": "em quarentena em {name}, por motivo",
    # -- pontual quarantine -----------------------------------------------------------------
    "quarantine: {n} records": "quarentena: {n} registros",
    "source": "origem",
    "record": "registro",
    "table": "tabela",
    "field": "campo",
    "original": "original",
    # -- ingest: notes from ingest/ -------------------------------------------------------
    "no GTFS stops loaded: positions not checked against the network's area": (
        "nenhuma parada GTFS carregada: posições não conferidas com a área da rede"
    ),
    "fleet register empty: vehicle ids not checked (run `pontual ingest vehicles`)": (
        "cadastro de frota vazio: veículos não conferidos (rode `pontual ingest vehicles`)"
    ),
    "columns taken by their common names: {pairs}": (
        "colunas reconhecidas pelos nomes usuais: {pairs}"
    ),
    "times read as {how}": "horários lidos como {how}",
    "columns not loaded (no place in the {kind} layout): {names}": (
        "colunas não carregadas (sem lugar no leiaute {kind}): {names}"
    ),
    "epoch seconds": "segundos desde 1970 (epoch)",
    "epoch milliseconds": "milissegundos desde 1970 (epoch)",
    "ISO 8601 with offset": "ISO 8601 com fuso",
    "ISO 8601 local time": "ISO 8601 em hora local",
    "layout of mapping {name} ({description})": "leiaute do mapeamento {name} ({description})",
    "JSON document: {n} records ({where})": "documento JSON: {n} registros ({where})",
    "no records read: {why}": "nenhum registro lido: {why}",
    "the file has a header line and no records": "o arquivo tem cabeçalho e nenhum registro",
    "the file is empty (only blanks)": "o arquivo está vazio (só espaços)",
    "the reader found no record in it": "o leitor não encontrou registros nele",
    "GPX: {n} route(s) ({n_points} points) not loaded: a route is a planned path, not a "
    "vehicle's trace": "GPX: {n} rota(s) ({n_points} pontos) não carregada(s): uma rota é um "
    "trajeto planejado, não o rastro de um veículo",
    "GPX: {n} waypoint(s) not loaded: a waypoint is a place, not a vehicle's trace (record "
    "inspections with `pontual ingest inspections`)": "GPX: {n} ponto(s) de referência não "
    "carregado(s): um ponto é um lugar, não o rastro de um veículo (registre fiscalizações com "
    "`pontual ingest inspections`)",
    "cannot fetch the feed ({url}): {error}; next try in {wait_s} s": (
        "não foi possível buscar o feed ({url}): {error}; nova tentativa em {wait_s} s"
    ),
    # -- ingest: refusals (InputError texts from ingest/, translated by the verb) ------------
    "the file's columns do not match the {kind} layout: no column for {lacking}. Columns "
    "found: {found}; expected: {expected} (optional: {optional})": "as colunas do arquivo não "
    "seguem o leiaute {kind}: nenhuma coluna para {lacking}. Colunas encontradas: {found}; "
    "esperadas: {expected} (opcionais: {optional})",
    "save this mapping as vendor.toml and pass --map vendor.toml:{toml}": (
        "salve este mapeamento como vendor.toml e passe --map vendor.toml:{toml}"
    ),
    "the header names the column(s) {names} more than once": (
        "o cabeçalho nomeia a(s) coluna(s) {names} mais de uma vez"
    ),
    "rename or remove the repeated column, so that each name says one thing": (
        "renomeie ou remova a coluna repetida, para que cada nome diga uma coisa só"
    ),
    "the file is {name} text, not UTF-8": "o arquivo é texto {name}, não UTF-8",
    "convert it: iconv -f {name} -t UTF-8 FILE > FILE.utf8": (
        "converta-o: iconv -f {name} -t UTF-8 ARQUIVO > ARQUIVO.utf8"
    ),
    "binary data, not text (a NUL byte at byte {n})": (
        "dados binários, não texto (um byte NUL no byte {n})"
    ),
    "is this the right file? expected a UTF-8 text file": (
        "é o arquivo certo? esperava-se um arquivo de texto UTF-8"
    ),
    "not UTF-8 text: byte {byte} at byte {n} cannot be read": (
        "não é texto UTF-8: o byte {byte} na posição {n} não pode ser lido"
    ),
    "save the file as UTF-8, or convert it: iconv -f latin1 -t UTF-8 FILE > FILE.utf8 (if it "
    "is Latin-1/Windows-1252)": "salve o arquivo como UTF-8, ou converta-o: iconv -f latin1 -t "
    "UTF-8 ARQUIVO > ARQUIVO.utf8 (se for Latin-1/Windows-1252)",
    "a GTFS-Realtime {feed} feed ({held}, no vehicle positions): it carries no vehicle "
    "positions, so it cannot be loaded as AVL": "um feed GTFS-Realtime {feed} ({held}, nenhuma "
    "posição de veículo): não traz posições de veículos, por isso não pode ser carregado como AVL",
    "{n} trip updates": "{n} atualizações de viagem",
    "{n} alerts": "{n} alertas",
    "GPX track {n} has no name, so its vehicle is unknown": (
        "a trilha GPX {n} não tem nome, então seu veículo é desconhecido"
    ),
    "give the vehicle's fleet number: pontual ingest avl FILE.gpx --vehicle N": (
        "informe o número de frota do veículo: pontual ingest avl ARQUIVO.gpx --vehicle N"
    ),
    "JSON array element {n} is not an object": "o elemento {n} do array JSON não é um objeto",
    "not JSON lines: none of the first {n} lines is a JSON object": (
        "não é JSON lines: nenhuma das {n} primeiras linhas é um objeto JSON"
    ),
    "{what}; the {n} records read before it were taken back": (
        "{what}; os {n} registros lidos antes foram desfeitos"
    ),
    # -- raw days archived to the lake, pruned past the retention, verified (docs/retention.md)
    "move the raw days (pings and taps) before a date from the store into the lake": (
        "mover os dias brutos (pings e transações) anteriores a uma data do banco para o lago"
    ),
    "Each raw day before --before is written to the lake, digested there, and leaves the store "
    "only when the lake copy gives the digest recorded at ingestion.": (
        "Cada dia bruto anterior a --before é gravado no lago, tem o digest recalculado lá e só "
        "sai do banco quando a cópia do lago dá o digest registrado na carga."
    ),
    "first day kept in the store YYYY-MM-DD": "primeiro dia que fica no banco AAAA-MM-DD",
    "--before {date} is after today ({today}): a day still receiving data cannot be archived": (
        "--before {date} é posterior a hoje ({today}): um dia que ainda recebe dados não pode "
        "ser arquivado"
    ),
    "archive closed periods only (docs/retention.md)": (
        "arquive só períodos encerrados (docs/retention.md)"
    ),
    "folder of the lake (default: the global --lake)": "pasta do lago (padrão: o --lake global)",
    "delete from the lake the raw days past the retention and without legal hold (a dry run by "
    "default)": (
        "apagar do lago os dias brutos além da retenção e sem guarda legal (simulação por padrão)"
    ),
    "Lists the lake's raw days before --before that may be deleted (past the retention, held by "
    "no case) and those kept with the reason; deletes only with --apply.": (
        "Lista os dias brutos do lago anteriores a --before que podem ser apagados (além da "
        "retenção, sem guarda legal de caso) e os mantidos com o motivo; só apaga com --apply."
    ),
    "delete only days before YYYY-MM-DD": "apagar só dias anteriores a AAAA-MM-DD",
    "delete (without it, a dry run that only lists)": "apagar (sem ele, só simula e lista)",
    "no lake given": "nenhum lago informado",
    "give --lake PATH (the lake folder)": "dê --lake CAMINHO (a pasta do lago)",
    "nothing to archive before {date}": "nada a arquivar antes de {date}",
    "{days} day(s) archived to {lake}: {rows} raw rows left the store": (
        "{days} dia(s) arquivado(s) em {lake}: {rows} linhas brutas saíram do banco"
    ),
    "the lake copy of {days} does not give the digest recorded at ingestion: those days "
    "stay in the store": (
        "a cópia no lago de {days} não dá o digest registrado na carga: esses dias ficam no banco"
    ),
    "run `pontual verify` to see which raw data changed": (
        "rode `pontual verify` para ver quais dados brutos mudaram"
    ),
    "{day}: may be deleted": "{day}: pode ser apagado",
    "{day}: kept: legal hold of case(s) {cases}": "{day}: mantido: guarda legal do(s) caso(s) {cases}",
    "{day}: kept: retention of {years} years (until {until})": (
        "{day}: mantido: retenção de {years} anos (até {until})"
    ),
    "dry run: nothing deleted (--apply deletes the {n} day(s))": (
        "simulação: nada foi apagado (--apply apaga o(s) {n} dia(s))"
    ),
    "{n} day(s) of raw data deleted from {lake}": "{n} dia(s) de dados brutos apagado(s) de {lake}",
    "verifying the lake {lake} alone": "conferindo só o lago {lake}",
    "digests recorded for {n} new table-day(s)": "digests registrados para {n} dia(s)-tabela novos",
    "{day} ({table}: archived, its lake partition is missing)": (
        "{day} ({table}: arquivado, sua partição no lago não existe)"
    ),
    "{day} ({table}: archived, its lake files cannot be read)": (
        "{day} ({table}: arquivado, seus arquivos no lago não podem ser lidos)"
    ),
    "{day} ({table}: archived, yet the store has rows of it again)": (
        "{day} ({table}: arquivado, mas o banco voltou a ter linhas dele)"
    ),
    "{day} ({table}: {n} rows recorded, {n_now} now)": (
        "{day} ({table}: {n} linhas registradas, {n_now} agora)"
    ),
    ", legal hold of case(s) {cases}": ", guarda legal do(s) caso(s) {cases}",
    "{ok} of {n} table-day(s) check out": "{ok} de {n} dia(s)-tabela conferem",
    "{n} table-day(s) deleted past the retention (digest kept)": (
        "{n} dia(s)-tabela apagado(s) após a retenção (digest mantido)"
    ),
    "raw data changed on {days}": "dados brutos alterados em {days}",
    "raw data missing from the store and the lake on {days}": (
        "dados brutos ausentes do banco e do lago em {days}"
    ),
    "{day} (legal hold of case(s) {cases})": "{day} (guarda legal do(s) caso(s) {cases})",
    "evidence package changed in cases {cases}": "pacote de evidências alterado nos casos {cases}",
    "restore the day from the backup; the recorded digest is the reference (art. 77)": (
        "restaure o dia a partir do backup; o digest registrado é a referência (art. 77)"
    ),
    "no changes": "nenhuma alteração",
    "the raw data of {n} day(s) of the period ({first} to {last}) were archived to the lake: "
    "computing on the store would leave them out": (
        "os dados brutos de {n} dia(s) do período ({first} a {last}) foram arquivados no lago: "
        "calcular sobre o banco os deixaria de fora"
    ),
    "compute that period over the lake (global --lake), or leave those days out": (
        "calcule esse período sobre o lago (--lake global), ou deixe esses dias de fora"
    ),
}
"""English message id -> pt-BR text (the same ``{fields}``)."""


def language() -> str:
    """The language of the command line's messages: "en" or "pt_BR" (the default)."""
    lang = os.environ.get(LANG_ENV, DEFAULT_LANG).strip().lower().replace("-", "_")
    return "en" if lang.startswith("en") else DEFAULT_LANG


def gettext(msgid: str, **fields: object) -> str:
    """The message `msgid` (its English text) in the chosen language, with its fields."""
    text = msgid if language() == "en" else CATALOGUE.get(msgid, msgid)
    return text.format(**fields) if fields else text


# The words `core.errors.where` and the raising code put at the start of a location's parts
# ("stops.txt, line 3, column stop_lat"; "option --limit"; "store x.duckdb, table trips").
_WHERE_WORDS: dict[str, str] = {
    "line": "linha",
    "field": "campo",
    "column": "coluna",
    "columns": "colunas",
    "key": "chave",
    "option": "opção",
    "store": "banco",
    "table": "tabela",
    "tables": "tabelas",
    "user": "usuário",
    "command line": "linha de comando",
}
_WHERE_PART = re.compile(
    r"(^|, )("
    + "|".join(sorted(map(re.escape, _WHERE_WORDS), key=len, reverse=True))
    + r")(?=[ ,]|$)"
)


def translate_where(text: str) -> str:
    """A location ("file, line N, field F", "option --x") in the chosen language: only the
    words naming its parts are translated; file names, fields and values stay as they are."""
    if language() == "en":
        return text
    text = _WHERE_PART.sub(lambda m: f"{m[1]}{_WHERE_WORDS[m[2]]}", text)
    return text.replace(" and ", " e ")


@cache
def _patterns() -> list[tuple[re.Pattern[str], str]]:
    """The templates as patterns, the most specific first: more literal text, then fewer
    fields ("'{value}' is not defined in {what}" before "'{value}' is not {expected}")."""
    ranked = []
    for msgid in CATALOGUE:
        parts = re.split(r"(\{[a-z_]+\})", msgid)
        fields = [p for p in parts if p.startswith("{") and p.endswith("}")]
        if not fields:
            continue  # matched exactly by `translate`
        named: set[str] = set()
        regex = ""
        for p in parts:
            if p not in fields:
                regex += re.escape(p)
            elif p in named:
                regex += f"(?P={p[1:-1]})"  # the same field again: the same text
            else:
                named.add(p)
                regex += f"(?P<{p[1:-1]}>.+?)"
        literal = sum(len(p) for p in parts if p not in fields)
        ranked.append((-literal, len(named), re.compile(f"^{regex}$", re.DOTALL), msgid))
    ranked.sort(key=lambda r: (r[0], r[1]))
    return [(pattern, msgid) for _, _, pattern, msgid in ranked]


def translate(text: str) -> str:
    """An English text produced below the command line, in the chosen language: the first
    catalogue template it matches, its fields translated in turn; else the text as it is."""
    if language() == "en":
        return text
    if text in CATALOGUE:
        return CATALOGUE[text]
    for pattern, msgid in _patterns():
        found = pattern.match(text)
        if found:
            fields = {k: _translate_field(k, v) for k, v in found.groupdict().items()}
            return CATALOGUE[msgid].format(**fields)
    return text


# A field named for a quantity by its unit (`{dist_m}`, `{max_km}`, `{size_mib}`) holding a
# number is written with pt-BR digits; `{issues}` holds GTFS findings ("where: message; ...").
_QUANTITY_FIELD = re.compile(r"(^|_)(km|m|s|mib)$")
_NUMBER = re.compile(r"-?\d+(?:\.(\d+))?")
_ISSUE = re.compile(r"^(?P<where>[^:;]+?): (?P<message>.+)$", re.DOTALL)


def _translate_field(name: str, value: str) -> str:
    if name == "issues":
        return "; ".join(translate_issue(part) for part in value.split("; "))
    number = _NUMBER.fullmatch(value)
    if number and _QUANTITY_FIELD.search(name):
        from core.pt_br import to_number

        return to_number(float(value), decimals=len(number[1] or ""))
    return translate(value)


def translate_issue(text: str) -> str:
    """A finding written "file, line N, column C: message" (`gtfs.errors.GtfsIssue`) in the
    chosen language: its location's words and its message."""
    found = _ISSUE.match(text)
    if found is None or language() == "en":
        return translate(text)
    return f"{translate_where(found['where'])}: {translate(found['message'])}"
