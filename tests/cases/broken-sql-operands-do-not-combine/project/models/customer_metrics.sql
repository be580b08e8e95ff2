SELECT customer_id, '2026-08-30' + INTERVAL '1' DAY AS total_spend FROM source('orders')
