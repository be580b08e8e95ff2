SELECT
    id,
    seen_at + INTERVAL '5' MINUTE AS plus_five_minutes,
    seen_at - INTERVAL '1.25' SECOND AS minus_a_second_and_a_quarter,
    INTERVAL '1 02:30:00' DAY TO SECOND + seen_at AS plus_a_day_and_more,
    seen_at + INTERVAL '1500' DAY(4) AS far_ahead,
    seen_at + INTERVAL '1' MONTH AS next_month,
    seen_at - INTERVAL '1-1' YEAR TO MONTH AS year_and_month_ago,
    seen_at - INTERVAL '2' HOUR >= TIMESTAMP '2026-08-30 08:00:00' AS recent
FROM source('events')
WHERE seen_at + INTERVAL '1' DAY > TIMESTAMP '1900-01-01 00:00:00'
