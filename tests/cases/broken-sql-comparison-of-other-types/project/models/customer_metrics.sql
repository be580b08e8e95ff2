SELECT customer_id, ordered_at = 5 AS total_spend FROM source('orders')
