//! Lists OpenCL platforms and devices: `cargo run --example devices`.

fn main() {
    match clfuse::list_devices() {
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
        Ok(devices) => {
            let mut platform = usize::MAX;
            for d in &devices {
                if d.platform_index != platform {
                    platform = d.platform_index;
                    println!("Platform {}: {}", d.platform_index, d.platform_name);
                }
                println!(
                    "  [{}] {} ({}; {})\n      {} | fp64: {} | compute units: {} | memory: {:.1} GiB | local memory: {} KiB | max work-group: {} | out-of-order queues: {}",
                    d.index,
                    d.name,
                    d.vendor,
                    d.version,
                    if d.is_gpu { "GPU" } else { "non-GPU" },
                    if d.fp64 { "yes" } else { "no" },
                    d.compute_units,
                    d.global_mem_bytes as f64 / (1u64 << 30) as f64,
                    d.local_mem_bytes / 1024,
                    d.max_work_group_size,
                    if d.out_of_order { "yes" } else { "no" },
                );
            }
            match clfuse::Runtime::get() {
                Ok(rt) => println!(
                    "\nSelected: [{}] {} (driver {})",
                    rt.device_info().index,
                    rt.device_info().name,
                    rt.device_info().driver_version
                ),
                Err(e) => println!("\nNo device selected: {e}"),
            }
        }
    }
}
