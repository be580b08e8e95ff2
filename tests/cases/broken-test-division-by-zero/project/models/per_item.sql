SELECT
    customer_id,
    amount / qty AS price_per_item
FROM source('orders')
