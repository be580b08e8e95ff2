SELECT customer_id, SUM(amount) AS total_spend FROM source('orders') WHERE CAST('2026-08-30 10:00:00' AS TIMESTAMP(6)) < ordered_at GROUP BY customer_id
