CREATE TABLE `events` (
  `big` BIGINT,
  `category` STRING,
  `fee` DECIMAL(38, 9),
  `flag` BOOLEAN,
  `id` INT,
  `note` STRING,
  `price` DECIMAL(12, 2),
  `qty` INT,
  `ratio` DOUBLE,
  `seen_at` TIMESTAMP(3)
) WITH (
  'connector' = 'kafka',
  'topic' = 'events',
  'properties.bootstrap.servers' = 'localhost:9092',
  'format' = 'json',
  'scan.startup.mode' = 'earliest-offset',
  'json.timestamp-format.standard' = 'ISO-8601'
);

CREATE TABLE `clicks_raw` (
  `clicked_at` TIMESTAMP(3),
  `page` STRING,
  `visitor` STRING,
  WATERMARK FOR `clicked_at` AS `clicked_at` - INTERVAL '1' MINUTE
) WITH (
  'connector' = 'kafka',
  'topic' = 'clicks',
  'properties.bootstrap.servers' = 'localhost:9092',
  'format' = 'json',
  'scan.startup.mode' = 'earliest-offset',
  'json.timestamp-format.standard' = 'ISO-8601'
);

CREATE TEMPORARY VIEW `clicks` AS SELECT * FROM `clicks_raw` WHERE CURRENT_WATERMARK(`clicked_at`) IS NULL OR `clicked_at` >= CURRENT_WATERMARK(`clicked_at`);

CREATE TEMPORARY VIEW `all_types` AS
SELECT `id`, `qty`, `big`, `ratio`, `price`, `fee`, `note`, `flag`, `seen_at`, CAST(`qty` AS BIGINT) AS `qty_as_int64`, CAST(`big` AS INT) AS `big_as_int32`, CAST(`price` AS DOUBLE) AS `price_as_float64`, CAST(`qty` AS DECIMAL(10, 2)) AS `qty_as_decimal`, CAST(`id` AS STRING) AS `id_as_string` FROM `events`;

CREATE TEMPORARY VIEW `arithmetic` AS
SELECT `id`, (`qty` + 1) AS `qty_plus_one`, (`qty` + `big`) AS `qty_plus_big`, (`big` - `qty`) AS `big_minus_qty`, (`qty` * 3) AS `qty_times_three`, (`big` / `qty`) AS `big_div_qty`, MOD(`big`, CAST(3 AS BIGINT)) AS `big_mod_three`, (`price` * `qty`) AS `line_total`, (`price` / 2) AS `half_price`, (`price` + CAST(0.25 AS DECIMAL(2, 2))) AS `price_plus_quarter`, (`fee` - `price`) AS `fee_minus_price`, (`ratio` * 2) AS `double_ratio`, (`ratio` + `price`) AS `ratio_plus_price`, (- `qty`) AS `neg_qty`, (- `price`) AS `neg_price` FROM `events`;

CREATE TEMPORARY VIEW `averages` AS
SELECT `category`, `avg(qty)` AS `avg_qty`, `avg(big)` AS `avg_big`, `avg(ratio)` AS `avg_ratio`, `avg(price)` AS `avg_price`, `avg(price * qty)` AS `avg_line`, `count(distinct note)` AS `notes`, `count(distinct qty % 2)` AS `parities` FROM (SELECT `category`, AVG(`qty`) AS `avg(qty)`, AVG(`big`) AS `avg(big)`, AVG(`ratio`) AS `avg(ratio)`, AVG(`price`) AS `avg(price)`, AVG(`price * qty`) AS `avg(price * qty)`, COUNT(DISTINCT `note`) AS `count(distinct note)`, COUNT(DISTINCT `qty % 2`) AS `count(distinct qty % 2)` FROM (SELECT `big`, `category`, `note`, `price`, `qty`, `ratio`, (`price` * `qty`) AS `price * qty`, MOD(`qty`, 2) AS `qty % 2` FROM (SELECT * FROM `events` WHERE (`category` IS NOT NULL)) AS t1) AS t2 GROUP BY `category`) AS t3;

CREATE TEMPORARY VIEW `busy_categories` AS
SELECT `category`, `count(*)` AS `event_count`, `sum(qty)` AS `total_qty` FROM (SELECT * FROM (SELECT `category`, COUNT(*) AS `count(*)`, SUM(CAST(`qty` AS BIGINT)) AS `sum(qty)` FROM `events` GROUP BY `category`) AS t1 WHERE ((`count(*)` >= 2) AND (`sum(qty)` < 10))) AS t2;

CREATE TEMPORARY VIEW `category_totals` AS
SELECT `category`, SUM(CAST(`qty` AS BIGINT)) AS `sum(qty)`, SUM(`big`) AS `sum(big)`, SUM(`ratio`) AS `sum(ratio)`, SUM(`price`) AS `sum(price)`, SUM(`fee`) AS `sum(fee)`, COUNT(*) AS `count(*)`, COUNT(`note`) AS `count(note)`, MIN(`qty`) AS `min(qty)`, MAX(`big`) AS `max(big)`, MIN(`ratio`) AS `min(ratio)`, MAX(`price`) AS `max(price)`, MIN(`note`) AS `min(note)`, MAX(`seen_at`) AS `max(seen_at)` FROM `events` GROUP BY `category`;

CREATE TEMPORARY VIEW `global_totals` AS
SELECT `count(*)` AS `event_count`, `count(flag)` AS `flag_known`, `sum(qty)` AS `total_qty`, `max(seen_at)` AS `last_seen` FROM (SELECT COUNT(*) AS `count(*)`, COUNT(`flag`) AS `count(flag)`, SUM(CAST(`qty` AS BIGINT)) AS `sum(qty)`, MAX(`seen_at`) AS `max(seen_at)` FROM `events`) AS t1;

CREATE TEMPORARY VIEW `labels` AS
SELECT `id`, CASE WHEN (`qty` >= 10) THEN CAST('bulk' AS STRING) WHEN (`qty` >= 2) THEN CAST('few' AS STRING) ELSE CAST('single' AS STRING) END AS `size`, CASE WHEN (`category` = 'a') THEN CAST(1 AS INT) WHEN (`category` = 'b') THEN CAST(2 AS INT) END AS `category_rank`, CASE WHEN (`note` IS NOT NULL) THEN CAST(`note` AS STRING) WHEN (`category` IS NOT NULL) THEN CAST(`category` AS STRING) ELSE CAST('none' AS STRING) END AS `label`, CASE WHEN (`qty` = 0) THEN CAST(CAST(NULL AS INT) AS INT) ELSE CAST(`qty` AS INT) END AS `nonzero_qty`, CASE WHEN (`price` IS NOT NULL) THEN CAST(CAST(`price` AS DECIMAL(38, 9)) AS DECIMAL(38, 9)) ELSE CAST(`fee` AS DECIMAL(38, 9)) END AS `amount`, ((`qty` >= 2) AND (`qty` <= 5)) AS `mid`, (NOT ((`qty` >= 2) AND (`qty` <= 5))) AS `outside`, ((`category` = 'a') OR (`category` = 'c')) AS `a_or_c`, (NOT ((`id` = 1) OR (`id` = 2))) AS `not_first`, CASE WHEN (`qty` = 0) THEN CAST(0 AS INT) ELSE CAST((100 / `qty`) AS INT) END AS `per_unit` FROM `events`;

CREATE TEMPORARY VIEW `latest_events` AS
SELECT `id`, `category`, `qty` FROM (SELECT `id`, `category`, `qty`, ROW_NUMBER() OVER (PARTITION BY `id` ORDER BY `sf_arrival` DESC) AS `sf_row` FROM (SELECT `id`, `category`, `qty`, PROCTIME() AS `sf_arrival` FROM (SELECT `id`, `category`, `qty` FROM (SELECT * FROM `events` WHERE (`id` IS NOT NULL)) AS t1) AS t2) AS `arrived3`) AS `latest3` WHERE `sf_row` = 1;

CREATE TEMPORARY VIEW `line_stats` AS
SELECT `category`, `sum(price * qty)` AS `revenue`, `count(*)` AS `line_count`, `max(CAST(qty AS decimal(12,2)) + fee)` AS `top_line` FROM (SELECT `category`, SUM(`price * qty`) AS `sum(price * qty)`, COUNT(*) AS `count(*)`, MAX(`CAST(qty AS decimal(12,2)) + fee`) AS `max(CAST(qty AS decimal(12,2)) + fee)` FROM (SELECT `category`, (`price` * `qty`) AS `price * qty`, (CAST(`qty` AS DECIMAL(12, 2)) + `fee`) AS `CAST(qty AS decimal(12,2)) + fee` FROM (SELECT * FROM `events` WHERE (`category` IS NOT NULL)) AS t1) AS t2 GROUP BY `category`) AS t3;

CREATE TEMPORARY VIEW `order_lines` AS
SELECT `category`, (`price` * `qty`) AS `line_total` FROM (SELECT * FROM `events` WHERE ((`category` IS NOT NULL) AND (`qty` > 0))) AS t1;

CREATE TEMPORARY VIEW `predicates` AS
SELECT `id`, `note`, (`note` = 'vip') AS `is_vip`, (`qty` = 2) AS `qty_is_two`, (`qty` <> 2) AS `qty_is_not_two`, (`qty` < 3) AS `qty_below_three`, (`qty` <= 3) AS `qty_at_most_three`, (`big` > 10) AS `big_above_ten`, (`big` >= 10) AS `big_at_least_ten`, (`flag` AND (`qty` > 1)) AS `flagged_and_many`, (`flag` OR (`qty` >= 3)) AS `flagged_or_many`, (NOT `flag`) AS `not_flagged`, (`flag` = FALSE) AS `flag_is_false`, (`note` IS NULL) AS `note_missing`, (`ratio` IS NOT NULL) AS `has_ratio` FROM (SELECT * FROM `events` WHERE (((`id` <> 99) AND ((`flag` = TRUE) OR (`note` IS NOT NULL))) AND (NOT (`qty` > 5)))) AS t1;

CREATE TEMPORARY VIEW `string_casts` AS
SELECT `id`, CASE WHEN (`category` = 'boolean') THEN CAST(CAST(`note` AS BOOLEAN) AS BOOLEAN) END AS `as_boolean`, CASE WHEN (`category` = 'double') THEN CAST(CAST(`note` AS DOUBLE) AS DOUBLE) END AS `as_double`, CASE WHEN (`category` = 'decimal') THEN CAST(CAST(`note` AS DECIMAL(5, 2)) AS DECIMAL(5, 2)) END AS `as_decimal`, CASE WHEN (`category` = 'int') THEN CAST(CAST(`note` AS INT) AS INT) END AS `as_int`, CASE WHEN (`category` = 'timestamp') THEN CAST(CAST(`note` AS TIMESTAMP(3)) AS TIMESTAMP(3)) END AS `as_timestamp` FROM (SELECT * FROM `events` WHERE (`note` IS NOT NULL)) AS t1;

CREATE TEMPORARY VIEW `text_and_numbers` AS
SELECT `id`, UPPER(`category`) AS `upper_category`, LOWER(`note`) AS `lower_note`, TRIM(BOTH FROM `note`) AS `trimmed`, TRIM(LEADING FROM `note`) AS `left_trimmed`, TRIM(TRAILING FROM `note`) AS `right_trimmed`, CHAR_LENGTH(`note`) AS `note_length`, CONCAT(CONCAT(`category`, CAST('-' AS STRING)), `note`) AS `tag`, CONCAT(`category`, CAST(':' AS STRING), UPPER(`note`)) AS `label`, SUBSTRING(`note`, 2, 3) AS `middle`, SUBSTRING(`note`, (-2)) AS `tail`, SUBSTRING(`note`, 0, 2) AS `head`, SUBSTRING(`note`, (-10)) AS `far_tail`, (`note` LIKE '%b_') AS `ends_b_any`, (NOT (`note` LIKE '  A%')) AS `not_padded_a`, ABS(`qty`) AS `abs_qty`, ABS(`price`) AS `abs_price`, FLOOR(`price`) AS `floor_price`, CEIL(`price`) AS `ceil_price`, FLOOR(`ratio`) AS `floor_ratio`, CEIL(`ratio`) AS `ceil_ratio`, ROUND(`fee`, 2) AS `fee_cents`, MOD(`qty`, 3) AS `qty_mod` FROM `events`;

CREATE TEMPORARY VIEW `time_shifts` AS
SELECT `id`, (`seen_at` + INTERVAL '0 00:05:00.000' DAY(3) TO SECOND(3)) AS `plus_five_minutes`, (`seen_at` - INTERVAL '0 00:00:01.250' DAY(3) TO SECOND(3)) AS `minus_a_second_and_a_quarter`, (`seen_at` + INTERVAL '1 02:30:00.000' DAY(3) TO SECOND(3)) AS `plus_a_day_and_more`, ((`seen_at` + INTERVAL '999 23:59:59.999' DAY(3) TO SECOND(3)) + INTERVAL '500 00:00:00.001' DAY(3) TO SECOND(3)) AS `far_ahead`, (`seen_at` + INTERVAL '0-1' YEAR(2) TO MONTH) AS `next_month`, (`seen_at` - INTERVAL '1-1' YEAR(2) TO MONTH) AS `year_and_month_ago`, ((`seen_at` - INTERVAL '0 02:00:00.000' DAY(3) TO SECOND(3)) >= CAST(TIMESTAMP '2026-08-30 08:00:00' AS TIMESTAMP(3))) AS `recent` FROM (SELECT * FROM `events` WHERE ((`seen_at` + INTERVAL '1 00:00:00.000' DAY(3) TO SECOND(3)) > CAST(TIMESTAMP '1900-01-01 00:00:00' AS TIMESTAMP(3)))) AS t1;

CREATE TEMPORARY VIEW `times` AS
SELECT `id`, `seen_at`, (`seen_at` >= CAST(TIMESTAMP '2026-08-30 10:00:00' AS TIMESTAMP(3))) AS `after_ten`, ((`seen_at` >= CAST(TIMESTAMP '2026-08-30 00:00:00' AS TIMESTAMP(3))) AND (`seen_at` <= CAST(TIMESTAMP '2026-08-30 23:59:59.999' AS TIMESTAMP(3)))) AS `on_the_day`, CAST(`seen_at` AS STRING) AS `seen_text`, CAST(`note` AS TIMESTAMP(3)) AS `noted_at`, EXTRACT(YEAR FROM `seen_at`) AS `y`, EXTRACT(MONTH FROM `seen_at`) AS `mo`, EXTRACT(DAY FROM `seen_at`) AS `d`, EXTRACT(HOUR FROM `seen_at`) AS `h`, EXTRACT(MINUTE FROM `seen_at`) AS `mi`, EXTRACT(SECOND FROM `seen_at`) AS `s`, EXTRACT(DOW FROM `seen_at`) AS `dow` FROM (SELECT * FROM `events` WHERE (`seen_at` IS NOT NULL)) AS t1;

CREATE TEMPORARY VIEW `visitor_clicks` AS
SELECT `visitor`, `count(*)` AS `clicks`, `count(distinct page)` AS `pages`, `max(clicked_at)` AS `last_click` FROM (SELECT /*+ STATE_TTL('t1' = '1h') */ `visitor`, COUNT(*) AS `count(*)`, COUNT(DISTINCT `page`) AS `count(distinct page)`, MAX(`clicked_at`) AS `max(clicked_at)` FROM (SELECT * FROM `clicks` WHERE (`visitor` IS NOT NULL)) AS t1 GROUP BY `visitor`) AS t2;

CREATE TEMPORARY VIEW `big_latest` AS
SELECT * FROM `latest_events` WHERE (`qty` > 5);

CREATE TEMPORARY VIEW `category_revenue` AS
SELECT `category`, `sum(line_total)` AS `revenue`, `max(line_total)` AS `largest_line` FROM (SELECT `category`, SUM(`line_total`) AS `sum(line_total)`, MAX(`line_total`) AS `max(line_total)` FROM `order_lines` GROUP BY `category`) AS t0;

CREATE TEMPORARY VIEW `top_categories` AS
SELECT `category`, `revenue` FROM (SELECT * FROM `category_revenue` WHERE (`revenue` >= 50)) AS t0;

CREATE TABLE `sink_averages` (
  `category` STRING,
  `avg_qty` INT,
  `avg_big` BIGINT,
  `avg_ratio` DOUBLE,
  `avg_price` DECIMAL(38, 6),
  `avg_line` DECIMAL(38, 6),
  `notes` BIGINT,
  `parities` BIGINT,
  PRIMARY KEY (`category`) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'averages',
  'properties.bootstrap.servers' = 'localhost:9092',
  'key.format' = 'json',
  'value.format' = 'json',
  'key.json.encode.decimal-as-plain-number' = 'true',
  'value.json.encode.decimal-as-plain-number' = 'true'
);

CREATE TABLE `sink_labels` (
  `id` INT,
  `size` STRING,
  `category_rank` INT,
  `label` STRING,
  `nonzero_qty` INT,
  `amount` DECIMAL(38, 9),
  `mid` BOOLEAN,
  `outside` BOOLEAN,
  `a_or_c` BOOLEAN,
  `not_first` BOOLEAN,
  `per_unit` INT
) WITH (
  'connector' = 'kafka',
  'topic' = 'labels',
  'properties.bootstrap.servers' = 'localhost:9092',
  'format' = 'json',
  'json.encode.decimal-as-plain-number' = 'true'
);

CREATE TABLE `sink_line_stats` (
  `category` STRING,
  `revenue` DECIMAL(38, 2),
  `line_count` BIGINT,
  `top_line` DECIMAL(38, 8),
  PRIMARY KEY (`category`) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'line-stats',
  'properties.bootstrap.servers' = 'localhost:9092',
  'key.format' = 'json',
  'value.format' = 'json',
  'key.json.encode.decimal-as-plain-number' = 'true',
  'value.json.encode.decimal-as-plain-number' = 'true'
);

CREATE TABLE `sink_string_casts` (
  `id` INT,
  `as_boolean` BOOLEAN,
  `as_double` DOUBLE,
  `as_decimal` DECIMAL(5, 2),
  `as_int` INT,
  `as_timestamp` TIMESTAMP(3)
) WITH (
  'connector' = 'kafka',
  'topic' = 'string-casts',
  'properties.bootstrap.servers' = 'localhost:9092',
  'format' = 'json',
  'json.timestamp-format.standard' = 'ISO-8601',
  'json.encode.decimal-as-plain-number' = 'true'
);

CREATE TABLE `sink_text_and_numbers` (
  `id` INT,
  `upper_category` STRING,
  `lower_note` STRING,
  `trimmed` STRING,
  `left_trimmed` STRING,
  `right_trimmed` STRING,
  `note_length` INT,
  `tag` STRING,
  `label` STRING,
  `middle` STRING,
  `tail` STRING,
  `head` STRING,
  `far_tail` STRING,
  `ends_b_any` BOOLEAN,
  `not_padded_a` BOOLEAN,
  `abs_qty` INT,
  `abs_price` DECIMAL(12, 2),
  `floor_price` DECIMAL(12, 0),
  `ceil_price` DECIMAL(12, 0),
  `floor_ratio` DOUBLE,
  `ceil_ratio` DOUBLE,
  `fee_cents` DECIMAL(32, 2),
  `qty_mod` INT
) WITH (
  'connector' = 'kafka',
  'topic' = 'text-and-numbers',
  'properties.bootstrap.servers' = 'localhost:9092',
  'format' = 'json',
  'json.encode.decimal-as-plain-number' = 'true'
);

CREATE TABLE `sink_time_shifts` (
  `id` INT,
  `plus_five_minutes` TIMESTAMP(3),
  `minus_a_second_and_a_quarter` TIMESTAMP(3),
  `plus_a_day_and_more` TIMESTAMP(3),
  `far_ahead` TIMESTAMP(3),
  `next_month` TIMESTAMP(3),
  `year_and_month_ago` TIMESTAMP(3),
  `recent` BOOLEAN
) WITH (
  'connector' = 'kafka',
  'topic' = 'time-shifts',
  'properties.bootstrap.servers' = 'localhost:9092',
  'format' = 'json',
  'json.timestamp-format.standard' = 'ISO-8601',
  'json.encode.decimal-as-plain-number' = 'true'
);

CREATE TABLE `sink_times` (
  `id` INT,
  `seen_at` TIMESTAMP(3),
  `after_ten` BOOLEAN,
  `on_the_day` BOOLEAN,
  `seen_text` STRING,
  `noted_at` TIMESTAMP(3),
  `y` BIGINT,
  `mo` BIGINT,
  `d` BIGINT,
  `h` BIGINT,
  `mi` BIGINT,
  `s` BIGINT,
  `dow` BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = 'times',
  'properties.bootstrap.servers' = 'localhost:9092',
  'format' = 'json',
  'json.timestamp-format.standard' = 'ISO-8601',
  'json.encode.decimal-as-plain-number' = 'true'
);

CREATE TABLE `sink_visitor_clicks` (
  `visitor` STRING,
  `clicks` BIGINT,
  `pages` BIGINT,
  `last_click` TIMESTAMP(3),
  PRIMARY KEY (`visitor`) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'visitor-clicks',
  'properties.bootstrap.servers' = 'localhost:9092',
  'key.format' = 'json',
  'value.format' = 'json',
  'value.json.timestamp-format.standard' = 'ISO-8601',
  'key.json.encode.decimal-as-plain-number' = 'true',
  'value.json.encode.decimal-as-plain-number' = 'true'
);

CREATE TABLE `sink_big_latest` (
  `id` INT,
  `category` STRING,
  `qty` INT,
  PRIMARY KEY (`id`) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'big-latest',
  'properties.bootstrap.servers' = 'localhost:9092',
  'key.format' = 'json',
  'value.format' = 'json',
  'key.json.encode.decimal-as-plain-number' = 'true',
  'value.json.encode.decimal-as-plain-number' = 'true'
);

CREATE TABLE `sink_top_categories` (
  `category` STRING,
  `revenue` DECIMAL(38, 2),
  PRIMARY KEY (`category`) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'top-categories',
  'properties.bootstrap.servers' = 'localhost:9092',
  'key.format' = 'json',
  'value.format' = 'json',
  'key.json.encode.decimal-as-plain-number' = 'true',
  'value.json.encode.decimal-as-plain-number' = 'true'
);

EXECUTE STATEMENT SET
BEGIN
  INSERT INTO `sink_averages` SELECT * FROM `averages`;
  INSERT INTO `sink_labels` SELECT * FROM `labels`;
  INSERT INTO `sink_line_stats` SELECT * FROM `line_stats`;
  INSERT INTO `sink_string_casts` SELECT * FROM `string_casts`;
  INSERT INTO `sink_text_and_numbers` SELECT * FROM `text_and_numbers`;
  INSERT INTO `sink_time_shifts` SELECT * FROM `time_shifts`;
  INSERT INTO `sink_times` SELECT * FROM `times`;
  INSERT INTO `sink_visitor_clicks` SELECT * FROM `visitor_clicks`;
  INSERT INTO `sink_big_latest` SELECT * FROM `big_latest`;
  INSERT INTO `sink_top_categories` SELECT * FROM `top_categories`;
END;
